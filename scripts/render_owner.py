"""Render a knowledge owner (a folder of Markdown files) as a realistic personal website and a LinkedIn-style CV PDF.

Test material for the knowledge importer: the site carries the usual boilerplate (cookie banner, newsletter box,
share buttons, related posts, footer, privacy/contact/tag pages, a forgotten drafts folder) that an importer must
skip, and the PDF looks like LinkedIn's "Save to PDF" profile (two columns, "Page N of M" footer).

    .venv/bin/python scripts/render_owner.py CONTENT_DIR OUT_DIR --base-url http://127.0.0.1:8765 [--theme divs]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import frontmatter
import yaml
from markdown_it import MarkdownIt

MD = MarkdownIt("commonmark").enable("table")
RESERVED = ("/", "/privacy/", "/contact/", "/tags/", "/drafts/", "/cv.pdf")
MONTHS = {"en": "January February March April May June July August September October November December".split(),
          "nl": "januari februari maart april mei juni juli augustus september oktober november december".split()}
_TEXTS = yaml.safe_load((Path(__file__).with_suffix(".yaml")).read_text(encoding="utf-8"))
T: dict[str, dict] = _TEXTS["texts"]
CV_LABELS: dict[str, dict] = _TEXTS["cv_labels"]
LANG_NAMES = ("English Dutch German French Spanish Italian Portuguese Polish Arabic Frisian Danish Swedish Turkish "
              "Mandarin Japanese Russian Greek Gaelic Welsh Urdu Hindi Nederlands Engels Duits Frans Spaans "
              "Italiaans Portugees Pools Arabisch Fries Deens Zweeds Turks Russisch").split()


@dataclass
class Doc:
    rel: str
    title: str
    kind: str
    lang: str
    updated: str
    public: bool
    body: str
    path: str = ""
    tags: list[str] = field(default_factory=list)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "page"


def load(content: Path) -> list[Doc]:
    docs = []
    for f in sorted(content.rglob("*.md")):
        post = frontmatter.load(f)
        meta = post.metadata
        doc = Doc(rel=f.relative_to(content).with_suffix("").as_posix(), title=str(meta.get("title", f.stem)),
                  kind=str(meta.get("kind", "about")), lang=str(meta.get("lang", "en")),
                  updated=str(meta.get("updated") or ""), public=meta.get("public", True) is not False,
                  body=post.content)
        url = str(meta.get("url") or "")
        doc.path = url if url.startswith("/") else ""
        docs.append(doc)
    used = set(RESERVED)
    for doc in docs:  # pages: url, or a path made from the file path; drafts under /drafts/
        if not doc.public:
            cand = f"/drafts/{slugify(Path(doc.rel).name)}/"
        else:
            cand = doc.path if doc.path else "/" + "/".join(slugify(p) for p in doc.rel.split("/")) + "/"
            cand = cand if cand.endswith((".html", "/")) else cand + "/"
            if cand.startswith(("/tags/", "/drafts/")):
                cand = "/" + slugify(doc.rel) + "/"
        while cand in used:
            cand = cand.rstrip("/") + "-2/"
        used.add(cand)
        doc.path = cand
    return docs


def fmt_date(iso: str, lang: str) -> str:
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", iso)
    if not m:
        return iso
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    return f"{d} {MONTHS['nl'][mo - 1]} {y}" if lang == "nl" else f"{MONTHS['en'][mo - 1]} {d}, {y}"


def plain(md: str) -> str:
    return re.sub(r"[*_`]+|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", md).strip()


class Site:
    def __init__(self, docs: list[Doc], name: str, base: str, theme: str) -> None:
        self.docs, self.name, self.base, self.theme = docs, name, base.rstrip("/"), theme
        self.pages = [d for d in docs if d.public and d.kind != "cv"]
        self.drafts = [d for d in docs if not d.public]
        langs = [d.lang for d in docs if d.public]
        self.lang = max(sorted(set(langs)), key=langs.count) if langs else "en"
        for d in self.pages:
            if d.kind in ("project", "article"):
                d.tags = [slugify(T[self.lang][d.kind])]
        self.tags: dict[str, list[Doc]] = {}
        for d in self.pages:
            for t in d.tags:
                self.tags.setdefault(t, []).append(d)
        h = int(hashlib.sha256(name.encode()).hexdigest(), 16)
        street = ["Oudegracht", "Keizersstraat", "Stationsweg", "Molenstraat", "Kerkstraat"][h % 5]
        city = ["Zutphen", "Amersfoort", "Zwolle", "Haarlem", "Arnhem", "Leiden"][h % 6]
        self.address = f"{street} {h % 180 + 2}, {1000 + h % 8900} {'ABCDEFGH'[h % 8]}{'KLMNPRST'[h % 7]} {city}"
        self.kvk = f"{h % 90000000 + 10000000}"
        self.handle = slugify(name)
        self.latest = max((d.updated for d in self.pages if d.updated), default="2024-05-25")[:10]

    def el(self, role: str, inner: str) -> str:
        sem = {"page": ("div", 'class="wrap"'), "header": ("header", 'class="site-header"'),
               "nav": ("nav", 'aria-label="Main menu"'), "main": ("main", 'id="main"'),
               "article": ("article", 'class="post"'), "aside": ("aside", 'class="sidebar"'),
               "footer": ("footer", 'class="site-footer"'), "widget": ("section", 'class="widget"')}
        divs = {"page": 'id="page" class="site"', "header": 'class="site-header"',
                "nav": 'id="site-navigation" class="main-navigation"', "main": 'id="content" class="site-content"',
                "article": 'class="post type-post status-publish hentry"',
                "aside": 'id="secondary" class="widget-area"',
                "footer": 'id="colophon" class="site-footer"', "widget": 'class="widget widget_text"'}
        tag, attrs = sem[role] if self.theme == "semantic" else ("div", divs[role])
        return f"<{tag} {attrs}>{inner}</{tag}>"

    def nav(self, lang: str) -> str:
        t = T[lang]
        items, groups = [f'<li><a href="/">{t["home"]}</a></li>'], {}
        for d in self.pages:
            if d.kind in ("project", "article"):
                groups.setdefault(d.kind, []).append(d)
            else:
                items.append(f'<li><a href="{d.path}">{escape(d.title)}</a></li>')
        for kind, ds in groups.items():
            sub = "".join(f'<li><a href="{d.path}">{escape(d.title)}</a></li>' for d in ds)
            items.append(f'<li class="menu-item-has-children"><a href="/tags/{slugify(T[self.lang][kind])}/">'
                         f'{t[kind]}</a><ul class="sub-menu">{sub}</ul></li>')
        items += [f'<li><a href="/contact/">{t["contact"]}</a></li>', f'<li><a href="/cv.pdf">{t["cv"]}</a></li>']
        return self.el("nav", f'<ul class="menu">{"".join(items)}</ul>')

    def widget(self, title: str, inner: str) -> str:
        return self.el("widget", f'<h2 class="widget-title">{title}</h2>{inner}')

    def layout(self, path: str, lang: str, title: str, content: str, doc: Doc | None = None) -> str:
        t = T[lang]
        url = self.base + path
        date = doc.updated[:10] if doc and doc.updated else ""
        meta = (f'<meta property="article:published_time" content="{date}">'
                f'<meta property="article:modified_time" content="{date}">' if date else "")
        cookie = (f'<div class="cookie-banner" id="cookie-consent" role="dialog"><p>{t["cookie"]}</p>'
                  f'<button>{t["accept"]}</button> <button>{t["decline"]}</button> '
                  f'<a href="/privacy/">{t["prefs"]}</a></div>')
        other = next((d for d in self.pages if d.lang != lang), None)
        switch = (f'<a class="lang-switch" href="{other.path}" hreflang="{other.lang}">'
                  f'{"English" if other.lang == "en" else "Nederlands"}</a>' if other else "")
        header = self.el("header", f'<div class="site-branding"><a class="logo" href="/" rel="home">'
                                   f'{escape(self.name)}</a></div>{switch}{self.nav(lang)}')
        recent = sorted((d for d in self.pages if d.kind == "article"), key=lambda d: d.updated, reverse=True)[:3]
        news = (f'<form class="newsletter" action="#" method="post"><p>{t["news_text"]}</p><label>{t["email"]} '
                f'<input type="email" name="email" placeholder="{t["email"]}"></label>'
                f'<button type="submit">{t["subscribe"]}</button></form>')
        recent_html = "".join(f'<li><a href="{d.path}">{escape(d.title)}</a></li>' for d in recent)
        aside = self.el("aside", self.widget(t["news"], news) + self.widget(t["recent"], f"<ul>{recent_html}</ul>"))
        socials = (f'<a href="https://www.linkedin.com/in/{self.handle}">LinkedIn</a> · <a href="https://github.com/'
                   f'{self.handle}">GitHub</a> · <a href="https://mastodon.social/@{self.handle}">Mastodon</a>')
        smap = "".join(f'<li><a href="{p}">{label}</a></li>' for p, label in (
            ("/", t["home"]), ("/tags/", t["tags"]), ("/contact/", t["contact"]), ("/privacy/", t["privacy"]),
            ("/cv.pdf", t["cv"]), ("/sitemap.xml", "XML sitemap")))
        footer = self.el("footer", (
            f'<p>© {self.latest[:4]} {escape(self.name)}. {t["rights"]}</p><p>{self.address} · {t["kvk"]} {self.kvk}'
            f'</p><p>{t["follow"]}: {socials}</p><h2>{t["sitemap"]}</h2><ul class="footer-links">{smap}</ul>'))
        page = cookie + header + self.el("main", content + aside) + footer
        style = ("<style>body{font-family:Georgia,serif;max-width:1100px;margin:auto;color:#222}"
                 ".cookie-banner{position:fixed;bottom:0;left:0;right:0;background:#333;color:#fff;padding:1em}"
                 ".menu{display:flex;flex-wrap:wrap;gap:1em;list-style:none}.sub-menu{display:none}"
                 ".site-content,#main{display:grid;grid-template-columns:3fr 1fr;gap:2em}</style>")
        return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{escape(title)} | '
                f'{escape(self.name)}</title><meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<link rel="canonical" href="{url}"><meta property="og:title" content="{escape(title)}">'
                f'<meta property="og:url" content="{url}"><meta property="og:site_name" content="{escape(self.name)}">'
                f'{meta}{style}</head>\n<body>{self.el("page", page)}</body></html>\n')

    def doc_page(self, doc: Doc) -> str:
        t, url = T[doc.lang], self.base + doc.path
        date = doc.updated[:10]
        byline = (f'<p class="byline entry-meta">{t["published"]} <time datetime="{date}">'
                  f'{fmt_date(date, doc.lang)}</time> {t["by"]} {escape(self.name)}</p>' if date else "")
        extra = ""
        if doc.kind in ("article", "project"):
            share = (f'<div class="share-buttons"><h2>{t["share"]}</h2><a href="https://www.linkedin.com/sharing/'
                     f'share-offsite/?url={url}">Share on LinkedIn</a> <a href="https://x.com/intent/tweet?url={url}">'
                     f'Share on X</a> <a href="https://mastodon.social/share?text={url}">Share on Mastodon</a> '
                     f'<button data-url="{url}">{t["copy"]}</button></div>')
            tags = ", ".join(f'<a href="/tags/{g}/" rel="tag">{g}</a>' for g in doc.tags)
            rel = sorted((d for d in self.pages if d is not doc and d.kind in ("article", "project")),
                         key=lambda d: (d.lang != doc.lang, d.kind != doc.kind, d.rel))[:3]
            rel_html = "".join(f'<li><a href="{d.path}">{escape(d.title)}</a></li>' for d in rel)
            extra = (f'<p class="tags">{t["tagged"]}: {tags}</p>' if tags else "") + (
                f'{share}<div class="related-posts"><h2>{t["related"]}</h2><ul>{rel_html}</ul></div>')
        body = (f'<div class="entry-header"><h1 class="entry-title">{escape(doc.title)}</h1>{byline}</div>'
                f'<div class="entry-content">{MD.render(doc.body)}</div>{extra}')
        return self.layout(doc.path, doc.lang, doc.title, self.el("article", body), doc)

    def simple(self, path: str, title: str, inner: str) -> tuple[str, str]:
        body = f'<div class="entry-header"><h1 class="entry-title">{escape(title)}</h1></div>{inner}'
        return path, self.layout(path, self.lang, title, self.el("article", body))

    def furniture(self) -> list[tuple[str, str]]:
        t = T[self.lang]
        groups: dict[str, list[Doc]] = {}
        for d in self.pages:
            groups.setdefault(t.get(d.kind, t["sections"]), []).append(d)
        home = f'<p class="intro">{t["welcome"]}</p>' + "".join(
            f"<h2>{g}</h2><ul>" + "".join(f'<li><a href="{d.path}">{escape(d.title)}</a></li>' for d in ds) + "</ul>"
            for g, ds in groups.items())
        form = (f'<p>{t["contact_intro"]}</p><form class="contact-form" action="#" method="post"><p><label>{t["name"]}'
                f'<br><input type="text" name="name" required></label></p><p><label>E-mail<br><input type="email" '
                f'name="email" required></label></p><p><label>{t["message"]}<br><textarea name="message" rows="8">'
                f'</textarea></label></p><p><label><input type="checkbox" name="consent" required> {t["consent"]}'
                f'</label></p><p><button type="submit">{t["send"]}</button></p></form>')
        tag_index = "<ul>" + "".join(f'<li><a href="/tags/{g}/">{g}</a> ({len(ds)})</li>'
                                     for g, ds in self.tags.items()) + "</ul>"
        out = [self.simple("/", self.name, home), self.simple("/contact/", t["contact"], form),
               self.simple("/privacy/", t["privacy"], "".join(f"<p>{p}</p>" for p in t["privacy_text"])),
               self.simple("/tags/", t["alltags"], tag_index)]
        for g, ds in self.tags.items():
            lst = "".join(f'<li><a href="{d.path}">{escape(d.title)}</a> <time datetime="{d.updated[:10]}">'
                          f'{fmt_date(d.updated[:10], self.lang)}</time></li>' for d in ds)
            out.append(self.simple(f"/tags/{g}/", f'{t["posts"]} “{g}”', f"<ul>{lst}</ul>"))
        return out

    def write(self, site: Path) -> list[str]:
        pages = self.furniture() + [(d.path, self.doc_page(d)) for d in self.pages + self.drafts]
        for path, html in pages:
            target = site / path.lstrip("/")
            target = target if path.endswith(".html") else target / "index.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(html, encoding="utf-8")
        dated = {d.path: d.updated[:10] for d in self.pages + self.drafts} | {"/privacy/": "2024-05-25"}
        urls = "".join(f"<url><loc>{self.base}{p}</loc><lastmod>{dated.get(p) or self.latest}</lastmod></url>\n"
                       for p, _ in pages)
        (site / "sitemap.xml").write_text('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps'
                                          f'.org/schemas/sitemap/0.9">\n{urls}</urlset>\n', encoding="utf-8")
        (site / "robots.txt").write_text(f"User-agent: *\nDisallow: /drafts/\n\nSitemap: {self.base}/sitemap.xml\n")
        return [p for p, _ in pages]


def sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    parts = re.split(r"(?m)^## +(.+)$", body)
    return parts[0], [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def cv_html(cv: Doc, docs: list[Doc], name: str, base: str) -> str:
    lang = cv.lang if cv.lang in CV_LABELS else "en"
    lab = CV_LABELS[lang]
    intro, secs = sections(cv.body)
    first = re.split(r"(?<=[.!?])\s", plain(intro) or plain(cv.body), maxsplit=1)[0]
    about = next((d for d in docs if d.kind == "about" and d.lang == cv.lang), None)
    about_first = re.split(r"(?<=[.!?])\s", plain(sections(about.body)[0]), maxsplit=1)[0] if about else ""
    months = "|".join(MONTHS["en"] + MONTHS["nl"])
    loc = re.search(r"(?:based in|lives in|living in|\buit|woont in|gevestigd in|, [a-z -]+ in)\s+"
                    rf"(?!{months})([A-Z][^.;()]{{1,40}}?)(?=[.;(]|$| with| since| and)", f"{first} {about_first}")
    skills_docs = [d for d in docs if d.kind == "skills" and d.public]
    skills = [plain(s).rstrip(":") for d in skills_docs for s in re.findall(r"\*\*([^*]{2,40})\*\*", d.body)]
    skills = [s for s in skills if not re.match(r"^\d|.*\b(19|20)\d\d\b", s)]
    for d in skills_docs:
        heads = [h.strip() for h in re.findall(r"(?m)^#{2,3} +(.{2,40})$", d.body)]
        skills += [h for h in heads if not re.search(r"\b(not|niet|never|nooit)\b", h, re.I)]
    word = r"(?:[a-z][a-z-]+ ){0,2}[a-z][a-z-]+"
    for d in [cv, *(d for d in docs if d.kind in ("about", "project") and d.lang == cv.lang)]:
        for enum in re.findall(rf"\b(?:for|in|on|voor)\s+({word}(?:, {word})+,? (?:and|en) {word})", d.body):
            skills += [w.strip().capitalize() for w in re.split(r", | and | en ", enum) if w.strip()]
    skills = list(dict.fromkeys(skills))[:5]
    langs: list[str] = []
    certs: list[str] = []
    for head, text in secs:
        items = [plain(i) for i in re.findall(r"(?m)^\s*[-*] +(.+)$", text)]
        if re.search(r"language|talen|sprachen", head, re.I):
            for it in items or [text]:
                m = re.match(r"([^:,(]{2,20}):\s*([^,;.]+)", it)
                found = sorted((it.find(w), w) for w in LANG_NAMES if re.search(rf"\b{w}\b", it))
                langs += [f"{m[1]} ({re.sub(r'[()]', '', m[2]).strip()})"] if m else [w for _, w in found]
        if re.search(r"certif", head, re.I):
            sents = [s for s in re.split(r"(?<=[.])\s", plain(text)) if re.search("certif", s, re.I)]
            certs += items or [re.sub(r"^.*?\b(?:is an?|holds an?|has an?|is)\s", "", s).strip(" .") for s in sents]
    langs = langs or [{"en": "English", "nl": "Nederlands"}.get(cv.lang, cv.lang)]
    host = base.split("://", 1)[-1].rstrip("/")
    first_name = (name.split(maxsplit=1) or ["info"])[0].lower()
    side = (f'<h2>{lab["contact"]}</h2><p>{first_name}@{slugify(name).replace("-", "")}.nl</p>'
            f'<p>{host} (Personal)</p><p>www.linkedin.com/in/{slugify(name)}-{len(cv.body) % 9000 + 1000:x} '
            f'(LinkedIn)</p><h2>{lab["skills"]}</h2>' + "".join(f"<p>{escape(s)}</p>" for s in skills)
            + f'<h2>{lab["langs"]}</h2>' + "".join(f"<p>{escape(s)}</p>" for s in langs)
            + (f'<h2>{lab["certs"]}</h2>' + "".join(f"<p>{escape(c)}</p>" for c in certs[:6]) if certs else ""))
    main = (f'<h1>{escape(name)}</h1><p class="headline">{escape(first)}</p>'
            + (f'<p class="loc">{escape(loc[1].strip())}</p>' if loc else "")
            + (f'<h2>{lab["summary"]}</h2>{MD.render(intro)}' if intro.strip() else "")
            + "".join(f"<h2>{escape(plain(h))}</h2>{MD.render(text)}" for h, text in secs))
    css = ("body{font-family:'Liberation Sans',Arial,sans-serif;font-size:10.5pt;color:#1d1d1d;margin:0}"
           ".cv{display:grid;grid-template-columns:31% 69%}.side{background:#eef2f6;padding:20pt 16pt;color:#333}"
           ".side h2{font-size:13pt;margin:18pt 0 7pt;color:#111}.side h2:first-child{margin-top:0}"
           ".side p{font-size:10pt;margin:0 0 6pt;line-height:1.35;overflow-wrap:anywhere}.main{padding:20pt 26pt}"
           "h1{font-size:26pt;font-weight:400;margin:0 0 6pt}.headline{font-size:12pt;line-height:1.4}"
           ".loc{color:#777;font-size:10.5pt}.main h2{font-size:15pt;margin:24pt 0 9pt;break-after:avoid}"
           ".main h3{font-size:11.5pt;margin:14pt 0 5pt;break-after:avoid}p,li{line-height:1.55}"
           "li{margin-bottom:4pt;break-inside:avoid}table{border-collapse:collapse;font-size:10pt}"
           "td,th{padding:3pt 6pt 3pt 0;text-align:left;vertical-align:top}")
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{escape(name)}</title>'
            f'<style>{css}</style></head><body><div class="cv"><div class="side">{side}</div>'
            f'<div class="main">{main}</div></div></body></html>')


def write_pdf(html: str, out: Path, name: str, lang: str) -> None:
    from playwright.sync_api import sync_playwright

    lab = CV_LABELS.get(lang, CV_LABELS["en"])
    small = "font-size:8px;color:#888;width:100%;font-family:'Liberation Sans',Arial,sans-serif;"
    footer = (f'<div style="{small}text-align:center;">{lab["page"]} <span class="pageNumber"></span> {lab["of"]} '
              f'<span class="totalPages"></span></div>')
    header = f'<div style="{small}text-align:right;padding-right:14mm;">{escape(name)}</div>'
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page()
        page.set_content(html)
        page.pdf(path=str(out), format="A4", display_header_footer=True, header_template=header,
                 footer_template=footer, print_background=True,
                 margin={"top": "14mm", "bottom": "16mm", "left": "10mm", "right": "10mm"})
        browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("content", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--name")
    ap.add_argument("--theme", choices=("semantic", "divs"), default="semantic")
    a = ap.parse_args()
    name = a.name
    for cand in (a.content / "owner.yaml", a.content.parent / "owner.yaml"):
        if not name and cand.exists():
            name = (yaml.safe_load(cand.read_text(encoding="utf-8")) or {}).get("name")
    name = name or a.content.resolve().name.title()
    docs = load(a.content)
    site = Site(docs, name, a.base_url, a.theme)
    site_dir = a.out / "site"
    shutil.rmtree(site_dir, ignore_errors=True)
    paths = site.write(site_dir)
    cvs = [d for d in docs if d.kind == "cv"]
    cv = (cvs[0] if cvs else None) or next(
        (d for d in docs if d.kind == "about"), docs[0])
    write_pdf(cv_html(cv, docs, name, site.base), a.out / "cv.pdf", name, cv.lang)
    shutil.copy(a.out / "cv.pdf", site_dir / "cv.pdf")
    print(f"{name}: {len(paths)} pages ({a.theme} theme) in {site_dir}, {len(site.drafts)} under /drafts/, "
          f"tags {', '.join(site.tags) or '-'}; robots.txt, sitemap.xml; CV from {cv.rel}.md -> {a.out / 'cv.pdf'}")


if __name__ == "__main__":
    main()

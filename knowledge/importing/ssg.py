"""A folder of a static-site generator's Markdown (Hugo, Jekyll, Eleventy, Astro) into documents.

Their front matter is mapped to ours (title; lastmod, updated, date or pubDate to ``updated``;
``draft: true`` to ``public: false``; lang, language or locale, else Hugo's ``name.nl.md``; a
permalink, url or slug to ``url``, else the address the generator would give the file), and what
only the generator understands is taken out of the body: shortcodes (``{{< >}}``, ``{{% %}}``),
Liquid and Nunjucks tags (``{% %}``, ``{{ }}``, ``{# #}``), MDX imports and components, and raw
HTML (its text is kept, scripts and styles are not).
"""

from __future__ import annotations

import datetime as dt
import html
import re
import tomllib
from pathlib import Path

import frontmatter
import yaml
from lxml import html as lxml_html

from knowledge.importing.model import Imported, Skipped, SourceError

_SUFFIXES = (".md", ".markdown", ".mdx")
# Folders of templates, themes, build output and dependencies, never content.
_NOT_CONTENT = {"_layouts", "_includes", "_data", "_sass", "layouts", "themes", "static", "public", "_site", "dist",
                "node_modules", ".git", "assets", "archetypes", "resources", "components", "i18n"}
_FILES_NOT_CONTENT = {"readme", "license", "licence", "changelog", "contributing", "code_of_conduct"}
_SHORTCODE_PAIR = re.compile(r"\{\{[<%]\s*(\w+)[^}]*[>%]\}\}(.*?)\{\{[<%]\s*/\s*\1\s*[>%]\}\}", re.S)
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}", re.S)
_TEMPLATE = re.compile(r"\{%-?.*?-?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)
_MDX_IMPORT = re.compile(r"^(?:import|export)\s.+$", re.M)
_HTML_BLOCK = re.compile(r"<(script|style)\b.*?</\1\s*>", re.S | re.I)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][^<>]*?/?>")
_HUGO_LANG = re.compile(r"\.(en|nl)$")


def is_site_folder(path: Path) -> bool:
    return path.is_dir() and any(p.suffix in _SUFFIXES for p in path.rglob("*") if p.is_file())


def read_folder(root: Path) -> tuple[list[Imported], list[Skipped]]:
    docs: list[Imported] = []
    skipped: list[Skipped] = []
    content = root / "content" if (root / "content").is_dir() else root  # Hugo keeps pages in content/
    for path in sorted(content.rglob("*")):
        rel = path.relative_to(content)
        if not path.is_file() or path.suffix not in _SUFFIXES or any(p in _NOT_CONTENT for p in rel.parts[:-1]):
            continue
        if path.stem.lower() in _FILES_NOT_CONTENT:
            skipped.append(Skipped(rel.as_posix(), "a repository file, not a page"))
            continue
        try:
            doc = _document(path, rel)
        except SourceError as exc:
            skipped.append(Skipped(rel.as_posix(), str(exc)))
            continue
        except Exception as exc:
            skipped.append(Skipped(rel.as_posix(), f"could not be read ({type(exc).__name__}: {str(exc)[:80]})"))
            continue
        if not doc.body.strip():
            skipped.append(Skipped(rel.as_posix(), "no text (a section's list page?)"))
            continue
        docs.append(doc)
    return docs, skipped


def _document(path: Path, rel: Path) -> Imported:
    raw = path.read_text(encoding="utf-8", errors="replace")
    meta, body = _front_matter(raw)
    stem = _HUGO_LANG.sub("", path.stem)
    lang_match = _HUGO_LANG.search(path.stem)
    lang = str(meta.get("lang") or meta.get("language") or meta.get("locale") or
               (lang_match.group(1) if lang_match else "")).lower()[:2]
    title = str(meta.get("title") or "").strip()
    body = clean_body(body)
    if not title:
        first = re.match(r"\s*#\s+(.+)\n?", body)
        title = first.group(1).strip() if first else stem.replace("-", " ").replace("_", " ").capitalize()
        body = body[first.end():] if first else body
    draft = meta.get("draft") is True or str(meta.get("draft")).lower() == "true" or "_drafts" in rel.parts \
        or meta.get("published") is False
    url = str(meta.get("permalink") or meta.get("url") or "").strip()
    if not url or re.search(r"[{}]|(?:^|/):\w", url):  # a pattern the generator fills in: made here
        # the address the generator gives the file: its folders (not the generator's own "_posts",
        # nor Astro's "src/content" or "src/pages") and its slug
        folders = [p for p in rel.parts[:-1] if not p.startswith("_")]
        if folders[:2] in (["src", "content"], ["src", "pages"]):
            folders = folders[2:]
        slug = str(meta.get("slug") or re.sub(r"^\d{4}-\d{2}-\d{2}-", "", stem)).strip("/")
        url = "/" + "/".join([*folders, *([] if slug in ("index", "_index") else [slug])]) + "/"
        url = url.replace("//", "/")
    if not url.startswith(("/", "http://", "https://")) or url.startswith("//"):
        url = "/" + url.lstrip("/")
    hints = [*rel.parts[:-1], *(str(meta.get(k) or "") for k in ("type", "layout", "section")),
             *_list(meta.get("categories")), *_list(meta.get("tags"))]
    updated = next((d for d in (_date(meta.get(k)) for k in ("lastmod", "last_modified_at", "updated",
                                                             "updatedDate", "date", "pubDate")) if d), None)
    slug_path = rel.with_name(stem).as_posix()
    return Imported(source=rel.as_posix(), title=title, body=body.strip() + "\n", lang=lang if lang in ("en", "nl")
                    else "", url=url, updated=updated, public=not draft, slug=re.sub(r"[^\w/-]+", "-", slug_path),
                    hints=[h for h in hints if h])


def _front_matter(raw: str) -> tuple[dict, str]:
    if raw.startswith("+++"):  # Hugo's TOML
        parts = raw.split("+++", 2)
        if len(parts) == 3:
            try:
                return tomllib.loads(parts[1]), parts[2]
            except tomllib.TOMLDecodeError as exc:
                raise SourceError(f"front matter is not valid TOML: {exc}") from None
    try:
        post = frontmatter.loads(raw)
    except yaml.YAMLError as exc:
        raise SourceError(f"front matter is not valid YAML: {str(exc).splitlines()[0]}") from None
    return dict(post.metadata), post.content


def clean_body(body: str) -> str:
    """The Markdown without the generator's syntax or raw HTML (text in HTML kept; code fences,
    inline code and autolinks untouched)."""
    out, fenced = [], False
    for part in re.split(r"(^(?:```|~~~).*$|`[^`\n]+`|<https?://[^>\s]+>)", body, flags=re.M):
        if re.match(r"^(?:```|~~~)", part):
            fenced = not fenced
            out.append(part)
            continue
        if fenced or re.fullmatch(r"`[^`\n]+`|<https?://[^>\s]+>", part):
            out.append(part)
            continue
        text = _SHORTCODE_PAIR.sub(lambda m: m.group(2), part)
        for pattern in (_SHORTCODE, _TEMPLATE, _MDX_IMPORT, _HTML_BLOCK, _COMMENT):
            text = pattern.sub("", text)
        text = _TAG.sub(lambda m: _tag_text(m.group(0)), text)
        out.append(html.unescape(text))
    return re.sub(r"\n{3,}", "\n\n", "".join(out))


def _tag_text(tag: str) -> str:
    """An HTML tag's contribution to the text: an image's alt text, a line break; else nothing."""
    if tag.lower().startswith("<img"):
        try:
            return lxml_html.fromstring(tag).get("alt") or ""
        except (ValueError, lxml_html.etree.ParserError):
            return ""
    return "\n" if re.match(r"</?(br|p|div|li|h\d)\b", tag, re.I) else ""


def _list(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _date(value) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    match = re.match(r"\s*(\d{4}-\d{2}-\d{2})", str(value or ""))
    try:
        return dt.date.fromisoformat(match.group(1)) if match else None
    except ValueError:
        return None

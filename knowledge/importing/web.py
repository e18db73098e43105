"""An owner's web page, or their whole site, into documents.

Only what the owner named is fetched: one page, or (for a site's root or a ``sitemap.xml``
address) the pages its sitemap lists, else the same-host links of the start page breadth first,
up to ``max_pages``. ``robots.txt`` is honoured for every page, a redirect to another host is
refused, and every response is read to at most 2 MB with timeouts and a user agent naming
Twinsite. A page's main text comes from trafilatura (menus, cookie bars, newsletter boxes,
footers and share buttons are its job, not ours); what is left to decide here is which pages
are not the owner's content: a contact form, a page that is mostly links (a tag or archive
index), too little text, or a legal page (privacy, cookies, terms) by its address or title.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import trafilatura
from lxml import etree
from lxml import html as lxml_html

from knowledge.importing.fetch import BudgetSpent, Fetcher, Resolver, decode, host_key
from knowledge.importing.hidden import visible_html
from knowledge.importing.model import Imported, Skipped, SourceError
from text.lexicon import shared

ROBOTS_AGENT = "Twinsite"

MIN_WORDS = 30
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Addresses of files, not pages: never followed from a page's links.
_FILE = re.compile(r"\.(pdf|jpe?g|png|gif|svg|webp|zip|gz|css|js|json|xml|rss|atom|ico|mp[34]|woff2?)$", re.I)
# A legal page is one whose address's last segment, or whose title, is legal words and nothing
# else ("privacy-policy", "Algemene voorwaarden"); "privacy-by-design" is the owner's own.
_LEGAL_WORDS = shared().words("legal.words")  # text/data/*.toml [legal]
_INDEX = re.compile(r"^(tags?|categor(y|ies|ie|ieen|ieën)|archives?|archief|author|auteur|labels?|page)$", re.I)
ProgressFn = Callable[[int, int, str], None]


@dataclass
class _Page:
    url: str
    html: str


def read_site(address: str, *, max_pages: int = 50, progress: ProgressFn | None = None, public_only: bool = False,
              until: float | None = None, resolve: Resolver | None = None) -> tuple[list[Imported], list[Skipped]]:
    """The page at ``address``, or the site when it is a root or a sitemap address. ``until``:
    when the import job's budget ends (``time.monotonic()``); ``resolve``: host, port -> addresses."""
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SourceError(f"{address} is not an http(s) address")
    fetcher = Fetcher(address, public_only=public_only, resolve=resolve, until=until)
    try:
        root = f"{parts.scheme}://{parts.netloc}"
        robots = _robots(fetcher, root)
        fetcher.allowed = lambda url: robots.can_fetch(ROBOTS_AGENT, url)
        whole_site = parts.path in ("", "/") or parts.path.endswith("sitemap.xml")
        lastmod: dict[str, dt.date | None] = {}
        if not whole_site:
            queue = [address]
        else:
            sitemaps = [address] if parts.path.endswith("sitemap.xml") else \
                (robots.site_maps() or [f"{root}/sitemap.xml"])
            lastmod = _sitemap_urls(fetcher, sitemaps)
            queue = list(lastmod) or [address]
        return _crawl(fetcher, robots, queue, lastmod, max_pages=max_pages if whole_site else 1,
                      follow_links=whole_site and not lastmod, progress=progress, strict=not whole_site)
    finally:
        fetcher.close()


def sitemap_pages(address: str, *, resolve: Resolver | None = None) -> set[str] | None:
    """The pages a site's sitemap lists now, for a source read as a whole site (its root or its
    sitemap); None when the source is one page, the site has no readable sitemap, or cannot be
    reached (then nothing is judged gone by its absence)."""
    parts = urlsplit(address)
    if parts.path not in ("", "/") and not parts.path.endswith("sitemap.xml"):
        return None
    fetcher = Fetcher(address, resolve=resolve)
    try:
        root = f"{parts.scheme}://{parts.netloc}"
        robots = _robots(fetcher, root)
        sitemaps = [address] if parts.path.endswith("sitemap.xml") else (robots.site_maps() or [f"{root}/sitemap.xml"])
        return set(_sitemap_urls(fetcher, sitemaps)) or None
    except SourceError:
        return None
    finally:
        fetcher.close()


def _robots(fetcher: Fetcher, root: str) -> RobotFileParser:
    robots = RobotFileParser()
    response, _, body = fetcher.get(f"{root}/robots.txt")
    if response.status_code >= 500:
        raise SourceError(f"{root}/robots.txt answered {response.status_code}: the site asks not to be read now")
    robots.parse(body.decode("utf-8", "replace").splitlines() if response.status_code < 400 else [])
    return robots


def _sitemap_urls(fetcher: Fetcher, sitemaps: list[str]) -> dict[str, dt.date | None]:
    """Page addresses (on the start host) with their lastmod; nested sitemap indexes followed.
    A sitemap that cannot be read is passed over (the start page's links are followed instead)."""
    found: dict[str, dt.date] = {}
    todo, seen = deque(sitemaps[:10]), set()
    while todo and len(seen) < 20:
        url = todo.popleft()
        if url in seen or host_key(url) != fetcher.host:
            continue
        seen.add(url)
        try:
            response, _, body = fetcher.get(url)
        except SourceError:
            continue
        if response.status_code != 200:
            continue
        try:
            root = etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True))
        except etree.XMLSyntaxError:
            continue
        for node in root:
            tag = etree.QName(node).localname if isinstance(node.tag, str) else ""
            loc = next((c.text or "" for c in node if isinstance(c.tag, str) and etree.QName(c).localname == "loc"), "")
            loc = loc.strip()
            if tag == "sitemap" and loc:
                todo.append(loc)
            elif tag == "url" and loc and host_key(loc) == fetcher.host:
                mod = next((c.text or "" for c in node
                            if isinstance(c.tag, str) and etree.QName(c).localname == "lastmod"), "")
                found[urldefrag(loc)[0]] = _date(mod)
    return found


def _date(text: str | None) -> dt.date | None:
    match = re.match(r"\s*(\d{4}-\d{2}-\d{2})", text or "")
    if not match:
        return None
    try:
        return dt.date.fromisoformat(match.group(1))
    except ValueError:
        return None


def _visit(fetcher: Fetcher, url: str, read: set[str], seen: set[str],
           todo: deque[str] | None) -> tuple[_Page, Imported | None, str] | None:
    """Read one page: (the page, its document or None, why not), or None for a redirect to a page
    read already. With ``todo``, its same-host links not seen yet are queued."""
    page = _page(fetcher, url)
    if page.url != url and page.url in read:
        return None
    read.add(page.url)
    if todo is not None:
        fresh = [link for link in dict.fromkeys(_links(page, fetcher.host)) if link not in seen]
        seen.update(fresh)
        todo.extend(fresh)
    doc, reason = page_document(page.url, page.html)
    return page, doc, reason


def _crawl(fetcher: Fetcher, robots: RobotFileParser, queue: list[str], lastmod: dict[str, dt.date | None], *,
           max_pages: int, follow_links: bool, progress: ProgressFn | None,
           strict: bool) -> tuple[list[Imported], list[Skipped]]:
    docs: list[Imported] = []
    skipped: list[Skipped] = []
    todo, seen, read = deque(queue), set(queue), set()
    fetched = 0
    while todo and fetched < max_pages:
        url = todo.popleft()
        if not fetcher.allowed(url):
            skipped.append(Skipped(url, "robots.txt disallows it"))
            if strict:
                raise SourceError(f"{url}: robots.txt disallows it")
            continue
        fetched += 1
        if progress:
            progress(fetched, min(max_pages, fetched + len(todo)), url)
        try:
            visited = _visit(fetcher, url, read, seen, todo if follow_links else None)
            if visited is None:  # a redirect to a page read already
                continue
            page, doc, reason = visited
        except BudgetSpent as exc:
            if strict:
                raise
            skipped.extend(Skipped(u, str(exc)) for u in [url, *todo])
            todo.clear()
            break
        except SourceError as exc:
            if strict:
                raise
            skipped.append(Skipped(url, str(exc)))
            continue
        except Exception as exc:
            if strict:
                raise SourceError(f"{url} could not be read ({type(exc).__name__})") from None
            skipped.append(Skipped(url, f"could not be read ({type(exc).__name__})"))
            continue
        if doc is None:
            skipped.append(Skipped(page.url, reason))
            continue
        doc.updated = lastmod.get(url) or doc.updated
        docs.append(doc)
    skipped.extend(Skipped(url, f"over --max-pages {max_pages}") for url in todo)
    openings = Openings(docs)
    listings = [doc for doc in docs if openings.repeats(doc)]
    skipped.extend(Skipped(doc.source, "repeats the other pages' text (a list of posts)") for doc in listings)
    return [doc for doc in docs if doc not in listings], skipped


class Openings:
    """The openings of every page's paragraphs, by their first ``PREFIX`` characters: a page is a
    list of posts when most of its lines of text are the openings of paragraphs of at least two
    other pages (a home page or archive that lists posts with their first lines). A page that
    merely shares a passage with another, or copies one page whole, is kept. Built once per site
    (each paragraph one key), each line looked up: no page compared with every other."""

    PREFIX = 30

    def __init__(self, docs: list[Imported]) -> None:
        self.pages: dict[str, list[tuple[int, str]]] = {}
        for n, doc in enumerate(docs):
            for paragraph in doc.body.splitlines():
                text = " ".join(paragraph.split())
                if len(text) >= self.PREFIX:
                    self.pages.setdefault(text[:self.PREFIX], []).append((n, text))
        self.index = {id(doc): n for n, doc in enumerate(docs)}

    def repeats(self, doc: Imported) -> bool:
        own = self.index[id(doc)]
        lines = [_key(line) for line in doc.body.splitlines() if len(line.split()) >= 8]
        matched, sources = 0, set()
        for line in lines:
            hits = {n for n, text in self.pages.get(line[:self.PREFIX], ()) if n != own and text.startswith(line)}
            matched += bool(hits)
            sources |= hits
        return len(lines) >= 2 and matched >= 0.5 * len(lines) and len(sources) >= 2


def _key(text: str) -> str:
    return " ".join(text.split()).rstrip("…. ")[:120]


def _page(fetcher: Fetcher, url: str) -> _Page:
    response, final, body = fetcher.get(url)
    if response.status_code != 200:
        raise SourceError(f"{url} answered {response.status_code}")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in _HTML_TYPES:
        raise SourceError(f"{url} is not HTML ({kind or 'no content type'})")
    return _Page(final, decode(body, response.charset_encoding))


def _links(page: _Page, host: str) -> list[str]:
    try:
        tree = lxml_html.fromstring(page.html)
    except (etree.ParserError, ValueError):
        return []
    links = []
    for href in tree.xpath("//a/@href"):
        try:
            url = urldefrag(urljoin(page.url, str(href)[:2000]))[0]
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.scheme in ("http", "https") and host_key(url) == host and not _FILE.search(parts.path):
            links.append(url)
    return links


def page_document(url: str, html: str) -> tuple[Imported | None, str]:
    """The page's main text as a document, or None and why it is not the owner's content. What
    the page hides from sight is gone before trafilatura reads it."""
    html, hidden = visible_html(html)
    try:
        tree = lxml_html.fromstring(html)
    except (etree.ParserError, ValueError):
        return None, "not readable HTML"
    text = trafilatura.extract(html, url=url, output_format="markdown", include_tables=True,
                               include_comments=False, favor_precision=True) or ""
    text = text.replace("\\_", "_")  # trafilatura escapes every underscore ("lock\\_timeout")
    meta = trafilatura.extract_metadata(html, default_url=url)
    title, body = _title(text, tree, meta.title if meta else "")
    path = urlsplit(url).path
    segments = [s for s in path.lower().split("/") if s]
    if _legal(segments[-1] if segments else "") or _legal(title or ""):
        return None, "a legal page (privacy, cookies, terms), not the owner's content"
    if any(_INDEX.match(s) for s in segments):
        return None, "an index of other pages (tags, categories, archive)"
    words = len(body.split())
    if tree.xpath("//form[.//textarea]") and words < 150:
        return None, "a contact form"
    if _link_share(html, url) > 0.5:
        return None, "mostly links (an index page)"
    if words < MIN_WORDS:
        return None, f"too little text ({words} words)"
    lang = (tree.get("lang") or tree.get("{http://www.w3.org/XML/1998/namespace}lang") or "").lower()[:2]
    doc = Imported(source=url, title=title or path.strip("/") or urlsplit(url).netloc, body=body,
                   lang=lang if lang in ("en", "nl") else "", url=url, updated=_date(meta.date if meta else None),
                   slug=_slug(path), hints=segments, left_out=hidden)
    return doc, ""


def _legal(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+", text.lower())
    return bool(words) and set(words) <= _LEGAL_WORDS and bool(set(words) - {"of", "and", "use", "en", "service"})


def _title(text: str, tree, meta_title: str | None) -> tuple[str, str]:
    """The page's first heading, else its <title> without the site's name; the body without it."""
    lines = text.strip().splitlines()
    if lines and re.match(r"#\s+\S", lines[0]):
        return lines[0].lstrip("#").strip(), "\n".join(lines[1:]).strip() + "\n"
    headings = tree.xpath("//h1")
    if headings:
        return " ".join(headings[0].text_content().split()), text.strip() + "\n"
    title = (meta_title or "").strip()
    for sep in (" | ", " – ", " — ", " · ", " - "):
        if sep in title:
            title = title.split(sep)[0].strip()
            break
    return title, text.strip() + "\n"


def _link_share(html: str, url: str) -> float:
    """How much of the main text, headings and list marks aside, is link text (an index page is
    nearly all links)."""
    linked = trafilatura.extract(html, url=url, output_format="markdown", include_links=True, favor_precision=True) \
        or ""
    lines = [re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", ln) for ln in linked.splitlines() if not ln.startswith("#")]
    text = "\n".join(lines)
    anchors = len(" ".join(re.findall(r"\[([^\]]*)\]\([^)]*\)", text)).split())
    total = len(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).split())
    return anchors / total if total else 0.0


def _slug(path: str) -> str:
    path = re.sub(r"(/index)?\.(html?|php|aspx?)$", "", path.strip("/"), flags=re.I)
    parts = [re.sub(r"[^a-z0-9]+", "-", p.lower()).strip("-") for p in path.split("/") if p]
    return "/".join(p for p in parts if p) or "home"

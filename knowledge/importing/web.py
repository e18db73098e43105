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

import httpx
import trafilatura
from lxml import etree
from lxml import html as lxml_html

from knowledge.importing.model import Imported, Skipped, SourceError
from twinsite import __version__

MAX_PAGE_BYTES = 2 * 1024 * 1024
USER_AGENT = f"Twinsite/{__version__} (knowledge import on its owner's request)"
ROBOTS_AGENT = "Twinsite"
TIMEOUT = httpx.Timeout(10.0, connect=5.0)
MIN_WORDS = 30
MAX_REDIRECTS = 5
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Addresses of files, not pages: never followed from a page's links.
_FILE = re.compile(r"\.(pdf|jpe?g|png|gif|svg|webp|zip|gz|css|js|json|xml|rss|atom|ico|mp[34]|woff2?)$", re.I)
# Legal pages and indexes of other pages, by a segment of their address or a word of their title,
# in both languages.
_LEGAL = re.compile(r"\b(privacy\w*|cookie\w*|terms|voorwaarden|disclaimer|legal|imprint|impressum|colofon|"
                    r"gdpr|avg|algemene-voorwaarden)\b", re.I)
_INDEX = re.compile(r"^(tags?|categor(y|ies|ie|ieen|ieën)|archives?|archief|author|auteur|labels?|page)$", re.I)
ProgressFn = Callable[[int, int, str], None]


@dataclass
class _Page:
    url: str
    html: str


class _Fetcher:
    """GET with the limits above; every address stays on the start host."""

    def __init__(self, host: str, client: httpx.Client) -> None:
        self.host, self.client = host, client

    def get(self, url: str) -> tuple[httpx.Response, str, bytes]:
        for _ in range(MAX_REDIRECTS + 1):
            if urlsplit(url).netloc != self.host:
                raise SourceError(f"{url} is on another host than {self.host}: only the named site is read")
            try:
                with self.client.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers.get("location", ""))
                        continue
                    body = b""
                    for part in response.iter_bytes():
                        body += part
                        if len(body) > MAX_PAGE_BYTES:
                            raise SourceError(f"{url} is over 2 MB: not read")
                    return response, url, body
            except httpx.TimeoutException:
                raise SourceError(f"{url} did not answer within {TIMEOUT.read:.0f} s") from None
            except httpx.HTTPError as exc:
                raise SourceError(f"{url} could not be reached ({type(exc).__name__})") from None
        raise SourceError(f"{url} redirects more than {MAX_REDIRECTS} times")


def read_site(address: str, *, max_pages: int = 50, progress: ProgressFn | None = None,
              client: httpx.Client | None = None) -> tuple[list[Imported], list[Skipped]]:
    """The page at ``address``, or the site when it is a root or a sitemap address."""
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SourceError(f"{address} is not an http(s) address")
    own = client is None
    client = client or httpx.Client(timeout=TIMEOUT, headers={"User-Agent": USER_AGENT}, follow_redirects=False)
    try:
        fetcher = _Fetcher(parts.netloc, client)
        robots = _robots(fetcher, f"{parts.scheme}://{parts.netloc}")
        whole_site = parts.path in ("", "/") or parts.path.endswith("sitemap.xml")
        lastmod: dict[str, dt.date] = {}
        if not whole_site:
            queue = [address]
        else:
            sitemaps = [address] if parts.path.endswith("sitemap.xml") else \
                (robots.site_maps() or [f"{parts.scheme}://{parts.netloc}/sitemap.xml"])
            lastmod = _sitemap_urls(fetcher, sitemaps)
            queue = list(lastmod) or [address]
        return _crawl(fetcher, robots, queue, lastmod, max_pages=max_pages if whole_site else 1,
                      follow_links=whole_site and not lastmod, progress=progress, strict=not whole_site)
    finally:
        if own:
            client.close()


def _robots(fetcher: _Fetcher, root: str) -> RobotFileParser:
    robots = RobotFileParser()
    response, _, body = fetcher.get(f"{root}/robots.txt")
    if response.status_code >= 500:
        raise SourceError(f"{root}/robots.txt answered {response.status_code}: the site asks not to be read now")
    robots.parse(body.decode("utf-8", "replace").splitlines() if response.status_code < 400 else [])
    return robots


def _sitemap_urls(fetcher: _Fetcher, sitemaps: list[str]) -> dict[str, dt.date]:
    """Page addresses (on the start host) with their lastmod; nested sitemap indexes followed."""
    found: dict[str, dt.date] = {}
    todo, seen = deque(sitemaps[:10]), set()
    while todo and len(seen) < 20:
        url = todo.popleft()
        if url in seen or urlsplit(url).netloc != fetcher.host:
            continue
        seen.add(url)
        response, _, body = fetcher.get(url)
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
            elif tag == "url" and loc and urlsplit(loc).netloc == fetcher.host:
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


def _crawl(fetcher: _Fetcher, robots: RobotFileParser, queue: list[str], lastmod: dict[str, dt.date | None], *,
           max_pages: int, follow_links: bool, progress: ProgressFn | None,
           strict: bool) -> tuple[list[Imported], list[Skipped]]:
    docs: list[Imported] = []
    skipped: list[Skipped] = []
    todo, seen = deque(queue), set(queue)
    fetched = 0
    while todo and fetched < max_pages:
        url = todo.popleft()
        if not robots.can_fetch(ROBOTS_AGENT, url):
            skipped.append(Skipped(url, "robots.txt disallows it"))
            if strict:
                raise SourceError(f"{url}: robots.txt disallows it")
            continue
        fetched += 1
        if progress:
            progress(fetched, min(max_pages, fetched + len(todo)), url)
        try:
            page = _page(fetcher, url)
        except SourceError as exc:
            if strict:
                raise
            skipped.append(Skipped(url, str(exc)))
            continue
        if follow_links:
            for link in _links(page):
                if link not in seen:
                    seen.add(link)
                    todo.append(link)
        doc, reason = page_document(page.url, page.html)
        if doc is None:
            skipped.append(Skipped(page.url, reason))
            continue
        doc.updated = lastmod.get(url) or doc.updated
        docs.append(doc)
    skipped.extend(Skipped(url, f"over --max-pages {max_pages}") for url in todo)
    return docs, skipped


def _page(fetcher: _Fetcher, url: str) -> _Page:
    response, final, body = fetcher.get(url)
    if response.status_code != 200:
        raise SourceError(f"{url} answered {response.status_code}")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in _HTML_TYPES:
        raise SourceError(f"{url} is not HTML ({kind or 'no content type'})")
    return _Page(final, body.decode(response.encoding or "utf-8", "replace"))


def _links(page: _Page) -> list[str]:
    try:
        tree = lxml_html.fromstring(page.html)
    except (etree.ParserError, ValueError):
        return []
    host = urlsplit(page.url).netloc
    links = []
    for href in tree.xpath("//a/@href"):
        url = urldefrag(urljoin(page.url, str(href)))[0]
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc == host and not _FILE.search(parts.path):
            links.append(url)
    return links


def page_document(url: str, html: str) -> tuple[Imported | None, str]:
    """The page's main text as a document, or None and why it is not the owner's content."""
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
    if any(_LEGAL.search(s) for s in segments) or _LEGAL.search(title or ""):
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
                   slug=_slug(path), hints=segments)
    return doc, ""


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

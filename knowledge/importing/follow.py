"""The twin follows the owner's site: the sources an owner imported are remembered in the knowledge
folder (``imports.yaml``, so a copy or a backup of the folder keeps them) and read again every
``TWIN_IMPORT_EVERY`` by the worker, or by hand with ``import_knowledge --refresh``.

A refresh is an import under the rules of a manual one: an unchanged page is untouched, a changed
one updated, a new one added, a file the owner edited kept. A page gone from the site (answered
404 or 410, or no longer in the sitemap of a site read from its sitemap) is unpublished
(``public: false``), never deleted, and listed; it is published again when it comes back. A source
that cannot be read changes nothing and is reported. What each refresh did is kept beside the
source in ``imports.yaml`` (its time, its counts, its error); the admin and the digest read it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter

from knowledge.importing.fetch import Fetcher, Resolver
from knowledge.importing.files import Status, edited, plan, render, write
from knowledge.importing.followed import Followed, followed, save
from knowledge.importing.model import Imported, SourceError
from knowledge.importing.sources import read_sources
from knowledge.importing.web import sitemap_pages

GONE_STATUSES = (404, 410)
_WEB = re.compile(r"https?://", re.I)


@dataclass
class Refresh:
    """What a refresh did, over every source."""

    sources: list[Followed] = field(default_factory=list)

    def total(self, key: str) -> int:
        return sum(s.changes.get(key, 0) for s in self.sources)

    @property
    def changed_files(self) -> int:
        return self.total("updated") + self.total("new") + self.total("gone")

    @property
    def failed(self) -> list[Followed]:
        return [s for s in self.sources if s.error]


def refresh(root: Path, *, now: dt.datetime, taken_titles: set[str] = frozenset(),
            resolve: Resolver | None = None) -> Refresh:
    """Read every followed source again and write what changed (see the module's docstring)."""
    report = Refresh()
    sources = followed(root)
    for source in sources:
        source.refreshed_at, source.gone = now, []
        if _WEB.match(source.source) is None and not Path(source.source).expanduser().exists():
            source.error, source.changes = "the file or folder is no longer there: nothing changed", {}
            source.record()
            report.sources.append(source)
            continue
        reading = read_sources([source.source], kind=source.kind, lang=source.lang, max_pages=source.max_pages,
                               resolve=resolve)
        if reading.failed:  # an unreachable site changes nothing
            source.error, source.changes = reading.failed[0][1], {}
            source.record()
            report.sources.append(source)
            continue
        entries = plan(reading.docs, root, taken_titles=taken_titles)
        write(entries, root)
        counts = {status: sum(e.status == status for e in entries) for status in Status}
        gone = _unpublish_gone(root, source, {d.source for d in reading.docs}, resolve=resolve)
        source.error, source.gone = "", gone
        source.changes = {"updated": counts[Status.CHANGED], "new": counts[Status.NEW], "gone": len(gone),
                          "kept": counts[Status.KEPT], "unchanged": counts[Status.UNCHANGED]}
        source.record()
        report.sources.append(source)
    save(root, sources)
    return report


def _belongs(page: str, source: str) -> bool:
    """Whether a file's ``source`` came from reading ``source`` (a site's pages, a folder's files)."""
    if _WEB.match(source):
        root = re.match(r"https?://[^/]+", source, re.I).group(0)
        whole_site = source.rstrip("/") == root or source.endswith("sitemap.xml")
        return page.startswith(root + "/") or page == root if whole_site else page == source
    return page == source or page.startswith(source.rstrip("/") + "/")


def _unpublish_gone(root: Path, source: Followed, read_now: set[str], *, resolve: Resolver | None) -> list[str]:
    """Unpublish the files of ``source`` whose page is gone; their paths. A file the owner edited
    is left as it is."""
    missing = {}
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        meta = frontmatter.loads(text).metadata
        page = str(meta.get("source") or "")
        if page and page not in read_now and meta.get("public", True) is not False and _belongs(page, source.source):
            missing[path] = (page, text, meta)
    if not missing:
        return []
    listed = sitemap_pages(source.source, resolve=resolve) if _WEB.match(source.source) else None
    gone = []
    for path, (page, text, meta) in missing.items():
        if _WEB.match(page) and not _gone_from_site(page, listed, resolve=resolve):
            continue
        if edited(text):
            continue
        post = frontmatter.loads(text)
        doc = Imported(source=page, title=str(meta.get("title") or ""), body=post.content, lang=str(meta["lang"]),
                       kind=str(meta["kind"]), url=str(meta.get("url") or ""), public=False,
                       updated=meta.get("updated") if isinstance(meta.get("updated"), dt.date) else None)
        path.write_text(render(doc), encoding="utf-8")
        gone.append(path.relative_to(root).as_posix())
    return gone


def _gone_from_site(page: str, listed: set[str] | None, *, resolve: Resolver | None) -> bool:
    """A page the site no longer has: out of its sitemap, or answered 404 or 410. A page that
    cannot be reached now is not gone."""
    if listed is not None and page not in listed:
        return True
    fetcher = Fetcher(page, resolve=resolve)
    try:
        response, _url, _body = fetcher.get(page)
    except SourceError:
        return False
    finally:
        fetcher.close()
    return response.status_code in GONE_STATUSES

"""Reads of the knowledge base's documents: their public pages and citation links, the
availability documents and the cited documents as the claim checker reads them. The search is
``knowledge.search``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from django.urls import reverse
from django.utils.text import slugify

from knowledge import claims
from knowledge.models import Document, KnowledgeChunk
from knowledge.watch import WATCH


def source_slug(path: str) -> str:
    """The public page of a document: ``/sources/<slug>/``, the slug from its file's path."""
    return slugify(str(PurePosixPath(path).with_suffix("")).replace("/", "-"))


def public_url(path: str, url: str) -> str:
    """Where a citation links: the document's own absolute address, else its source page."""
    if url.startswith(("https://", "http://")):
        return url
    return reverse("source", args=[source_slug(path)])


def document_urls() -> dict[str, str]:
    """Each document's citation link by title (read once per knowledge change: ``knowledge.watch``)."""
    return dict(WATCH.cached("document_urls", _read_document_urls))


def document_urls_kept() -> dict[str, str] | None:
    """``document_urls`` when it is kept for the knowledge as it is (no database), else None."""
    kept = WATCH.peek("document_urls")
    return None if kept is None else dict(kept)  # type: ignore[call-overload]


def _read_document_urls() -> dict[str, str]:
    return {title: public_url(path, url) for title, path, url in Document.objects.values_list("title", "path", "url")}


def document_by_slug(slug: str) -> Document | None:
    """A public document by its source-page slug (only public documents are in the table)."""
    return next((d for d in Document.objects.all() if source_slug(d.path) == slug), None)

def availability_chunks(language: str) -> list[dict]:
    """All chunks of the availability documents, in the visitor's language when there is one."""
    chunks = list(
        KnowledgeChunk.objects.filter(document__kind=Document.Kind.AVAILABILITY)
        .select_related("document")
        .order_by("document__path", "ordinal")
    )
    # one row per chunk and embedding model: each chunk once
    chunks = list({(c.document_id, c.content_hash): c for c in chunks}.values())
    preferred = [c for c in chunks if c.document.lang == language] or chunks
    return [
        {"chunk_id": c.pk, "document_title": c.document.title,
         "document_url": public_url(c.document.path, c.document.url), "heading_path": c.heading_path, "text": c.text}
        for c in preferred
    ]


# The cited documents as the claim checker reads them (split, counted), kept per process by
# title and content hash: a changed document is read again, at most _SOURCES_MAX are kept (the
# least recently used dropped first).
_sources: OrderedDict[tuple[str, str], claims.Source] = OrderedDict()
_sources_lock = threading.Lock()
_SOURCES_MAX = 500


def claim_sources(titles: list[str]) -> dict[str, claims.Source]:
    """The documents of ``titles`` (those that exist), each as ``knowledge.claims.Source``. While
    the process hears the knowledge base's changes (``knowledge.watch``), documents already read
    are found by their title's content hash, read once per change: no query in a turn."""
    if WATCH.generation() is not None:
        digests = WATCH.cached("document_digests", lambda: dict(Document.objects.values_list("title", "content_hash")))
        kept = {title: _sources.get((title, digests[title])) for title in titles if title in digests}
        if None not in kept.values():
            return kept
    out = {}
    for title, body, digest in Document.objects.filter(title__in=titles).values_list("title", "body", "content_hash"):
        with _sources_lock:
            source = _sources.get((title, digest))
            if source is not None:
                _sources.move_to_end((title, digest))
        if source is None:
            source = claims.Source(title, body)
            with _sources_lock:
                _sources[(title, digest)] = source
                while len(_sources) > _SOURCES_MAX:
                    _sources.popitem(last=False)  # the least recently used
        out[title] = source
    return out

"""Any source an owner names, read into documents with a language and a kind each."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from knowledge.importing import kinds, ssg, web
from knowledge.importing.model import Imported, Skipped, SourceError
from knowledge.importing.pdf import read_pdf
from knowledge.importing.word import read_docx
from knowledge.language import detect_language

_CV_TITLE = re.compile(r"\b(cv|curriculum|vitae|resume|résumé|profile|profiel|levensloop)\b", re.I)


@dataclass
class Reading:
    docs: list[Imported] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source, one-line reason)


def read_sources(sources: list[str], *, kind: str | None = None, lang: str | None = None, max_pages: int = 50,
                 progress: Callable[[int, int, str], None] | None = None,
                 client: httpx.Client | None = None) -> Reading:
    reading = Reading()
    for source in sources:
        try:
            docs, skipped = _read(source, max_pages=max_pages, progress=progress, client=client)
        except SourceError as exc:
            reading.failed.append((source, str(exc)))
            continue
        reading.skipped.extend(skipped)
        reading.docs.extend(_decided(doc, kind=kind, lang=lang) for doc in docs)
    return reading


def _read(source: str, *, max_pages: int, progress, client) -> tuple[list[Imported], list[Skipped]]:
    if re.match(r"https?://", source, re.I):
        return web.read_site(source, max_pages=max_pages, progress=progress, client=client)
    path = Path(source).expanduser()
    if not path.exists():
        raise SourceError("no such file or folder")
    if path.is_dir():
        if not ssg.is_site_folder(path):
            raise SourceError("a folder without Markdown files (.md, .markdown, .mdx)")
        return ssg.read_folder(path)
    head = path.read_bytes()[:8]
    if head.startswith(b"%PDF"):
        return [read_pdf(path, source=path.name)], []
    if head.startswith(b"PK") and path.suffix.lower() == ".docx":
        return [read_docx(path, source=path.name)], []
    raise SourceError("not a PDF, a DOCX file, a folder of Markdown or a web address")


def _decided(doc: Imported, *, kind: str | None, lang: str | None) -> Imported:
    """The document with its language (forced, the page's own, else detected) and kind (forced or
    guessed); a CV read from a file is titled as one, its owner's name kept in the text."""
    doc.lang = lang or doc.lang or detect_language(f"{doc.title}\n{doc.body}")
    if kind:
        doc.kind, doc.kind_sure = kind, True
    else:
        doc.kind, doc.kind_sure = kinds.guess_kind(doc)
    if doc.kind == "cv" and {"pdf", "docx"} & set(doc.hints) and not _CV_TITLE.search(doc.title):
        doc.person = doc.title
        doc.body = f"{doc.title}\n\n{doc.body}"
        doc.title = f"Curriculum vitae {doc.title}"
    return doc

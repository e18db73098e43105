"""Any source an owner names, read into documents with a language and a kind each."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from knowledge.importing import fetch, kinds, ssg, web
from knowledge.importing.fetch import Resolver
from knowledge.importing.hidden import screened
from knowledge.importing.model import Imported, Skipped, SourceError
from knowledge.importing.pdf import read_pdf
from knowledge.importing.word import read_docx
from text.language import detect_language

_CV_TITLE = re.compile(r"\b(cv|curriculum|vitae|resume|résumé|profile|profiel|levensloop)\b", re.I)


@dataclass
class Reading:
    docs: list[Imported] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (source, one-line reason)


def read_sources(sources: list[str], *, kind: str | None = None, lang: str | None = None, max_pages: int = 50,
                 progress: Callable[[int, int, str], None] | None = None, public_only: bool = False,
                 labels: dict[str, str] | None = None, resolve: Resolver | None = None) -> Reading:
    """Every source read; one that fails, for whatever reason, is one line in ``failed`` and the
    others go on. ``public_only``: web addresses must resolve to public addresses (the admin).
    ``labels``: the name a file goes by instead of its path (an upload: the owner's file name, the
    same for every upload of it, so a new upload updates the document it wrote before)."""
    reading = Reading()
    until = time.monotonic() + fetch.budget()  # the job's wall-clock budget, over every source
    for source in sources:
        try:
            docs, skipped = _read(source, max_pages=max_pages, progress=progress, public_only=public_only,
                                  label=(labels or {}).get(source), until=until, resolve=resolve)
        except SourceError as exc:
            reading.failed.append((source, str(exc)))
            continue
        except Exception as exc:
            reading.failed.append((source, f"could not be read ({type(exc).__name__}: {str(exc)[:120]})"))
            continue
        reading.skipped.extend(skipped)
        reading.docs.extend(_decided(doc, kind=kind, lang=lang) for doc in docs)
    return reading


def _read(source: str, *, max_pages: int, progress, public_only: bool, label: str | None = None,
          until: float | None = None, resolve: Resolver | None = None) -> tuple[list[Imported], list[Skipped]]:
    if re.match(r"https?://", source, re.I):
        return web.read_site(source, max_pages=max_pages, progress=progress, public_only=public_only, until=until,
                             resolve=resolve)
    path = Path(source).expanduser()
    if not path.exists():
        raise SourceError("no such file or folder")
    # the file or folder as the owner named it (a second "cv.pdf" in another folder is another source)
    name = label or Path(source).as_posix().removeprefix("./")
    if path.is_dir():
        if not ssg.is_site_folder(path):
            raise SourceError("a folder without Markdown files (.md, .markdown, .mdx)")
        docs, skipped = ssg.read_folder(path)
        for doc in docs:
            doc.source = f"{name.rstrip('/')}/{doc.source}"
        return docs, skipped
    with path.open("rb") as handle:
        head = handle.read(8)
    if head.startswith(b"%PDF"):
        return [read_pdf(path, source=name)], []
    if head.startswith(b"PK") and path.suffix.lower() == ".docx":
        return [read_docx(path, source=name)], []
    raise SourceError("not a PDF, a DOCX file, a folder of Markdown or a web address")


def _decided(doc: Imported, *, kind: str | None, lang: str | None) -> Imported:
    """The document with its language (forced, the page's own, else detected) and kind (forced or
    guessed); a CV whose reader found its owner's name line is titled as one, the name kept in
    the text."""
    doc.body, instructions = screened(doc.body)
    _, ordering = screened(doc.title)
    if ordering:  # a title is read by the model too: the file's name instead
        doc.title = doc.slug.rsplit("/", 1)[-1].replace("-", " ").capitalize() or "Document"
    doc.left_out = [*doc.left_out, *ordering, *instructions]
    doc.lang = lang or doc.lang or detect_language(f"{doc.title}\n{doc.body}")
    if kind:
        doc.kind, doc.kind_sure = kind, True
    else:
        doc.kind, doc.kind_sure = kinds.guess_kind(doc)
    if doc.kind != "cv" or _CV_TITLE.search(doc.person):
        doc.person = ""
    if doc.person and doc.title == doc.person:
        doc.body = f"{doc.title}\n\n{doc.body}"
        doc.title = f"Curriculum vitae {doc.title}"
    return doc

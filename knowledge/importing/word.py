"""A DOCX CV into one Markdown document (python-docx): headings and lists kept.

Word's built-in styles say what a paragraph is: "Title", "Heading N", "List ..." (or a numbered
paragraph); a short paragraph set wholly in bold, as many CVs mark a role, becomes a heading one
level below the last one. Tables are read row by row, a row a line.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
from docx.opc.exceptions import PackageNotFoundError

from knowledge.importing.model import Imported, SourceError
from knowledge.importing.pdf import MAX_PDF_BYTES, humanise

_HEADING = re.compile(r"^(?:heading|kop)\s*(\d)$", re.I)


def read_docx(path: Path, *, source: str | None = None) -> Imported:
    if path.stat().st_size > MAX_PDF_BYTES:
        raise SourceError("the file is over the 20 MB limit")
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError):
        raise SourceError("not a readable DOCX file (save it again from Word as .docx)") from None
    title = (document.core_properties.title or "").strip()
    out: list[str] = []
    level = 1
    for block in document.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "tbl":
            table = next(t for t in document.tables if t._element is block)
            for row in table.rows:
                cells = [" ".join(c.text.split()) for c in row.cells]
                line = " | ".join(dict.fromkeys(c for c in cells if c))
                if line:
                    out.append(line)
            continue
        if tag != "p":
            continue
        paragraph = next(p for p in document.paragraphs if p._element is block)
        text = " ".join(paragraph.text.split())
        if not text:
            continue
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        heading = _HEADING.match(style)
        if style.lower() == "title" and not title:
            title = text
        elif heading:
            level = min(int(heading.group(1)) + 1, 6)
            out.append("#" * level + " " + text)
        elif "list" in style.lower() or (paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None):
            out.append("- " + text)
        elif _all_bold(paragraph) and len(text.split()) <= 12 and not text.endswith("."):
            out.append("#" * min(level + 1, 6) + " " + text)
        else:
            out.append(text)
    if not out:
        raise SourceError("no text in it")
    if not title:
        first = next((line for line in out if line.startswith("#")), "")
        title = first.lstrip("#").strip() or humanise(path.stem)
        if first:
            out.remove(first)
    body = "\n\n".join(out).replace("\n\n- ", "\n- ")
    return Imported(source=source or path.name, title=title, body=body.strip() + "\n",
                    slug=humanise(path.stem, slug=True), hints=["docx"])


def _all_bold(paragraph) -> bool:
    runs = [r for r in paragraph.runs if r.text.strip()]
    return bool(runs) and all(r.bold or (r.style is not None and r.style.font.bold) for r in runs)

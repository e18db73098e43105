"""A DOCX CV into one Markdown document (python-docx): headings and lists kept.

Word's built-in styles say what a paragraph is: "Title", "Heading N", "List ..." (or a numbered
paragraph); a short paragraph set wholly in bold, as many CVs mark a role, becomes a heading one
level below the last one. Tables are read row by row, a row a line, with the text of tables
nested in their cells; the content controls of Word's CV templates are read like the body.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.text.paragraph import Paragraph
from lxml import etree

from knowledge.importing.model import MAX_FILE_BYTES, Imported, SourceError
from knowledge.importing.pdf import humanise

_HEADING = re.compile(r"^(?:heading|kop)\s*(\d)$", re.I)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def read_docx(path: Path, *, source: str | None = None) -> Imported:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise SourceError("the file is over the 20 MB limit")
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError):
        raise SourceError("not a readable DOCX file (save it again from Word as .docx)") from None
    reader = _Reader(document)
    reader.read(document.element.body)
    if not reader.out:
        raise SourceError("no text in it")
    title, person = reader.title or (document.core_properties.title or "").strip(), reader.title
    out = reader.out
    if not title:
        first = next((line for line in out if line.startswith("#")), "")
        title = first.lstrip("#").strip() or humanise(path.stem)
        if first:
            out.remove(first)
    body = "\n\n".join(out).replace("\n\n- ", "\n- ")
    return Imported(source=source or path.name, title=title, body=body.strip() + "\n",
                    slug=humanise(path.stem, slug=True), hints=["docx"],
                    person=person if 2 <= len(person.split()) <= 5 else "")


class _Reader:
    def __init__(self, document) -> None:
        self.document = document
        self.out: list[str] = []
        self.title = ""
        self.level = 1

    def read(self, element) -> None:
        for child in element.iterchildren():
            tag = child.tag
            if tag == f"{_W}p":
                self._paragraph(Paragraph(child, self.document))
            elif tag == f"{_W}tbl":
                for row in child.iter(f"{_W}tr"):
                    if row.getparent() is not child:
                        continue  # a nested table's rows are read as their cell's text
                    cells = [" ".join("".join(t.text or "" for t in cell.iter(f"{_W}t")).split())
                             for cell in row.iterchildren(f"{_W}tc")]
                    line = " | ".join(dict.fromkeys(c for c in cells if c))
                    if line:
                        self.out.append(line)
            elif tag == f"{_W}sdt":  # a content control: its content is the document's
                for content in child.iterchildren(f"{_W}sdtContent"):
                    self.read(content)

    def _paragraph(self, paragraph: Paragraph) -> None:
        text = " ".join(paragraph.text.split())
        if not text:
            return
        style = (paragraph.style.name if paragraph.style is not None else "") or ""
        heading = _HEADING.match(style)
        if style.lower() == "title" and not self.title:
            self.title = text
        elif heading:
            self.level = min(int(heading.group(1)) + 1, 6)
            self.out.append("#" * self.level + " " + text)
        elif "list" in style.lower() or (paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None):
            self.out.append("- " + text)
        elif _all_bold(paragraph) and len(text.split()) <= 12 and not text.endswith("."):
            self.out.append("#" * min(self.level + 1, 6) + " " + text)
        else:
            self.out.append(text)


def _all_bold(paragraph: Paragraph) -> bool:
    runs = [r for r in paragraph.runs if r.text.strip()]
    return bool(runs) and all(r.bold or (r.style is not None and r.style.font.bold) for r in runs)

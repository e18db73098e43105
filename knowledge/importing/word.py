"""A DOCX CV into one Markdown document (python-docx): headings and lists kept.

Word's built-in styles say what a paragraph is: "Title", "Heading N", "List ..." (or a numbered
paragraph); a short paragraph set wholly in bold, as many CVs mark a role, becomes a heading one
level below the last one. Tables are read row by row, a row a line, with the text of tables
nested in their cells; the content controls of Word's CV templates are read like the body.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.text.paragraph import Paragraph
from lxml import etree

from knowledge.importing.model import HIDDEN, MAX_FILE_BYTES, Imported, SourceError, excerpt
from knowledge.importing.pdf import humanise

_HEADING = re.compile(r"^(?:heading|kop)\s*(\d)$", re.I)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MAX_UNPACKED = 50 * 2**20  # bytes a DOCX may unpack to, all its parts together
MAX_RATIO = 100  # a part over 1 MB packed more than this many times smaller is refused
MAX_PARTS = 1000


def read_docx(path: Path, *, source: str | None = None) -> Imported:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise SourceError("the file is over the 20 MB limit")
    check_zip(path)
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, etree.XMLSyntaxError):
        raise SourceError("not a readable DOCX file (save it again from Word as .docx)") from None
    hidden = _drop_hidden_runs(document)
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
                    person=person if 2 <= len(person.split()) <= 5 else "", left_out=hidden)


def check_zip(path: Path) -> None:
    """Refuse a file that unpacks to more than ``MAX_UNPACKED`` or any part of it packed more than
    ``MAX_RATIO`` times smaller than it unpacks (a zip bomb): read from the zip's directory, before
    anything is inflated. zipfile inflates a part to its declared size and no further."""
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
            _check_sizes(parts)
            for part in parts:
                _inflate_bounded(archive, part)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error):
        raise SourceError("not a readable DOCX file (save it again from Word as .docx)") from None


def _inflate_bounded(archive: zipfile.ZipFile, part: zipfile.ZipInfo) -> None:
    """Inflate a part a megabyte at a time, to its declared size and its checksum: python-docx's
    ``read()`` would inflate all that one deflate call gives, whatever the directory claims."""
    with archive.open(part) as stream:
        while stream.read(2**20):
            pass


def _check_sizes(parts: list[zipfile.ZipInfo]) -> None:
    if len(parts) > MAX_PARTS:
        raise SourceError(f"the DOCX has over {MAX_PARTS} parts: not read")
    total = 0
    for part in parts:
        total += part.file_size
        if total > MAX_UNPACKED:
            raise SourceError(f"the DOCX unpacks to over {MAX_UNPACKED // 2**20} MB: not read (a zip bomb?)")
        if part.file_size > 2**20 and part.file_size > MAX_RATIO * max(part.compress_size, 1):
            raise SourceError(f"{part.filename} in the DOCX is packed over {MAX_RATIO} times smaller than it "
                              "unpacks: not read (a zip bomb?)")


def _drop_hidden_runs(document) -> list[tuple[str, str]]:
    """Remove the runs Word does not show (``w:vanish``, ``w:webHidden``, or a hidden character or
    paragraph style): returns (HIDDEN, excerpt) per paragraph that had hidden text."""
    styles = _hidden_styles(document)
    dropped: list[tuple[str, str]] = []
    for paragraph in document.element.body.iter(f"{_W}p"):
        style = paragraph.find(f"{_W}pPr/{_W}pStyle")
        in_hidden_style = style is not None and style.get(f"{_W}val") in styles
        texts = []
        for run in list(paragraph.iter(f"{_W}r")):
            if _run_hidden(run, styles, in_hidden_style):
                texts.append("".join(t.text or "" for t in run.iter(f"{_W}t")))
                run.getparent().remove(run)
        if "".join(texts).strip():
            dropped.append((HIDDEN, excerpt("".join(texts))))
    return dropped


def _run_hidden(run, styles: set[str], in_hidden_style: bool) -> bool:
    props = run.find(f"{_W}rPr")
    if props is None:
        return in_hidden_style
    for tag in ("vanish", "webHidden", "specVanish"):
        flag = props.find(f"{_W}{tag}")
        if flag is not None:
            return flag.get(f"{_W}val", "true").lower() not in ("0", "false", "off")
    style = props.find(f"{_W}rStyle")
    return in_hidden_style or (style is not None and style.get(f"{_W}val") in styles)


def _hidden_styles(document) -> set[str]:
    """The ids of styles that hide their text, their own setting or one they are based on."""
    hidden = set()
    for style in document.styles:
        current, seen = style, 0
        while current is not None and seen < 10:
            font = getattr(current, "font", None)
            if font is not None and font.hidden is not None:
                if font.hidden:
                    hidden.add(style.style_id)
                break
            current, seen = getattr(current, "base_style", None), seen + 1
    return hidden


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

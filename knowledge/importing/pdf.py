"""A CV or a LinkedIn "Save to PDF" profile into one Markdown document.

pdfplumber (MIT, on pdfminer.six) gives every word with its position, size and font; the layout
is read from those, not from the order in which the file happens to draw its text (a word
processor draws a two-column table row by row, and a plain text extraction then interleaves the
columns: BENCHMARKS.md, "Reading two-column PDFs"). Per page:

- header and footer lines (a page number, or a line that repeats in the same margin band on
  other pages) are dropped;
- a vertical gutter that no word crosses splits a page into two columns, unless the two sides'
  lines sit on the same baselines (a table of dates and roles, read row by row);
- the wider column of every page forms one stream, the narrower (a sidebar) another, so a role
  that runs over a page break stays whole and the sidebar does not cut through it.

In each stream, font size tells headings apart: the document's single largest line is its title
(the owner's name on a CV), and the stream's larger sizes become ``##``/``###`` headings in
order of size. Wrapped lines are joined; short lines in a block (dates, a place, skills) become
list items.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pdfplumber
from pdfminer.pdfdocument import PDFPasswordIncorrect
from pdfplumber.utils.exceptions import PdfminerException

from knowledge.importing.model import HIDDEN, MAX_FILE_BYTES, Imported, SourceError, excerpt
from knowledge.importing.pdfbounds import MAX_PAGES, run_bounded, visible_page

_BAND = 0.075  # the top and bottom share of a page where headers and footers sit
_PAGE_NUMBER = re.compile(r"^[-–(\[ ]*((page|pagina|seite|p\.)\s*)?#+(\s*(of|van|von|/|de|sur)\s*#+)?[-–)\] ]*$",
                          re.IGNORECASE)
_BULLET = re.compile(r"^[•◦▪▫●○■□‣⁃∙·*–-]\s+")
_SENTENCE_END = re.compile(r"[.!?:;]$")
# Words that do not end a phrase in either language: a line ending in one goes on below.
_CONNECTORS = frozenset("and or of the a an to for in on at with by from as & en de het een van voor met op aan "
                        "bij te om naar uit door".split())
_CID = re.compile(r"\(cid:\d+\)")
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)


@dataclass
class _Word:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool


@dataclass
class _Line:
    page: int
    words: list[_Word]
    top: float = 0.0
    bottom: float = 0.0
    x0: float = 0.0
    x1: float = 0.0
    size: float = 0.0
    bold: bool = False

    def __post_init__(self) -> None:
        self.words.sort(key=lambda w: w.x0)
        self.top = min(w.top for w in self.words)
        self.bottom = max(w.bottom for w in self.words)
        self.x0 = min(w.x0 for w in self.words)
        self.x1 = max(w.x1 for w in self.words)
        chars = Counter()
        for w in self.words:
            chars[round(w.size * 2) / 2] += len(w.text)
        self.size = chars.most_common(1)[0][0]
        self.bold = sum(len(w.text) for w in self.words if w.bold) > 0.6 * sum(chars.values())

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class _Stream:
    lines: list[_Line] = field(default_factory=list)
    right: dict[int, float] = field(default_factory=dict)  # per page: the column's right edge
    left: dict[int, float] = field(default_factory=dict)


def read_pdf(path: Path, *, source: str | None = None) -> Imported:
    """The PDF read in a child process with a memory, CPU-time and page cap (``pdfbounds``)."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SourceError(f"the PDF is {size / 1e6:.1f} MB, over the 20 MB limit: export a smaller one")
    return run_bounded(read_here, path, source)


def read_here(path: Path, source: str | None = None) -> Imported:
    """The PDF read in this process: only under ``pdfbounds.run_bounded``."""
    hidden: list[tuple[str, str]] = []
    try:
        with pdfplumber.open(path) as pdf:
            if len(pdf.pages) > MAX_PAGES:
                raise SourceError(f"the PDF has {len(pdf.pages)} pages, over the {MAX_PAGES} an import reads")
            pages = [_words(page, hidden) for page in pdf.pages]
            heights = [float(page.height) for page in pdf.pages]
            meta_title = str((pdf.metadata or {}).get("Title") or "").strip()
    except (PdfminerException, PDFPasswordIncorrect) as exc:
        if any(isinstance(arg, MemoryError) for arg in exc.args):  # the child's address-space limit
            raise SourceError("the PDF needs more memory than an import may use: not read") from None
        if "password" in repr(exc).lower() or "encrypt" in repr(exc).lower():
            raise SourceError("the PDF is encrypted: save or print it again without a password") from None
        raise SourceError(f"not a readable PDF ({type(exc).__name__})") from None
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"not a readable PDF ({type(exc).__name__})") from None
    if sum(len(w.text) for words in pages for w in words) < 20:
        raise SourceError("no text in it (a scan?): export it as a text PDF, or paste the text into a Markdown file")
    lines_per_page = [_lines(n, words) for n, words in enumerate(pages)]
    lines_per_page = _drop_running_lines(lines_per_page, heights)
    main, side = _Stream(), _Stream()
    for n, lines in enumerate(lines_per_page):
        _split_columns(n, lines, main, side)
    body_size = _body_size(main.lines + side.lines)
    title_line = _title_line(main.lines + side.lines, body_size)
    title = title_line.text if title_line else (meta_title or humanise(path.stem))
    if title_line:  # a running header that repeats the name on later pages
        for stream in (main, side):
            stream.lines = [ln for ln in stream.lines if ln is title_line or ln.text != title_line.text
                            or heights[ln.page] * _BAND < ln.top < heights[ln.page] * (1 - _BAND)]
    parts = [_markdown(main, body_size, title_line), _markdown(side, body_size, title_line)]
    body = "\n\n".join(p for p in parts if p).strip() + "\n"
    # the largest line names the CV's owner only when it is a name's length
    person = title_line.text if title_line and 2 <= len(title_line.words) <= 5 else ""
    return Imported(source=source or path.name, title=title, body=body, slug=humanise(path.stem, slug=True),
                    hints=["pdf"], person=person, left_out=hidden)


def _words(page, hidden: list[tuple[str, str]]) -> list[_Word]:
    page, unseen = visible_page(page)
    if unseen.strip():
        hidden.append((HIDDEN, excerpt(unseen)))
    return [
        _Word(text=_glyphs(w["text"]), x0=float(w["x0"]), x1=float(w["x1"]), top=float(w["top"]),
              bottom=float(w["bottom"]), size=float(w.get("size") or 0),
              bold=bool(_BOLD.search(str(w.get("fontname") or ""))))
        for w in page.extract_words(extra_attrs=["size", "fontname"], use_text_flow=False)
        if w["text"].strip()
    ]


def _glyphs(text: str) -> str:
    """A glyph the font does not map to a character comes out as "(cid:N)": alone it is a list
    bullet (nearly always), inside a word it is dropped."""
    return "•" if _CID.fullmatch(text) else _CID.sub("", text)


def _lines(page: int, words: list[_Word], *, columns: tuple[float, ...] = ()) -> list[_Line]:
    """Words on one baseline (and, given gutters, on one side of them) as lines, top to bottom."""
    lines: list[list[_Word]] = []
    for word in sorted(words, key=lambda w: (w.top, w.x0)):
        side = sum(word.x0 >= g for g in columns)
        for line in reversed(lines[-6:]):
            ref = line[0]
            if sum(ref.x0 >= g for g in columns) == side and abs(ref.top - word.top) <= 0.45 * max(ref.size, 1):
                line.append(word)
                break
        else:
            lines.append([word])
    return sorted((_Line(page, ws) for ws in lines), key=lambda ln: (ln.top, ln.x0))


def _drop_running_lines(pages: list[list[_Line]], heights: list[float]) -> list[list[_Line]]:
    """Without page numbers and the header or footer lines that repeat in the margin bands."""

    def key(line: _Line) -> str:
        return re.sub(r"\d+", "#", line.text.strip().lower())

    def in_band(line: _Line, height: float) -> bool:
        return line.bottom < height * _BAND or line.top > height * (1 - _BAND)

    seen = Counter(key(ln) for n, lines in enumerate(pages) for ln in lines if in_band(ln, heights[n]))
    repeated = {k for k, count in seen.items() if count >= 2 and len(pages) >= 2}
    return [[ln for ln in lines
             if not (in_band(ln, heights[n]) and (key(ln) in repeated or _PAGE_NUMBER.match(key(ln))))]
            for n, lines in enumerate(pages)]


def _gutter(lines: list[_Line]) -> float | None:
    """The middle of the widest vertical band, away from the page's edges, that no word crosses,
    with enough text on either side; None for a page of one column."""
    words = [w for ln in lines for w in ln.words]
    if len(words) < 12:
        return None
    left, right = min(w.x0 for w in words), max(w.x1 for w in words)
    width = right - left
    covered = sorted((w.x0, w.x1) for w in words)
    best, gaps, reach = None, [], left
    for x0, x1 in covered:
        if x0 > reach:
            gaps.append((reach, x0))
        reach = max(reach, x1)
    for start, stop in gaps:
        middle = (start + stop) / 2
        if stop - start < 10 or not left + 0.15 * width < middle < right - 0.15 * width:
            continue
        before = sum(1 for w in words if w.x1 <= start)
        if min(before, len(words) - before) < max(5, 0.03 * len(words)):
            continue
        if best is None or stop - start > best[1] - best[0]:
            best = (start, stop)
    return None if best is None else (best[0] + best[1]) / 2


def _split_columns(page: int, lines: list[_Line], main: _Stream, side: _Stream) -> None:
    if not lines:
        return
    gutter = _gutter(lines)
    if gutter is not None:
        split = _lines(page, [w for ln in lines for w in ln.words], columns=(gutter,))
        left = [ln for ln in split if ln.x1 <= gutter]
        right = [ln for ln in split if ln.x0 >= gutter]
        # a table (dates beside roles) puts its cells on shared baselines; two flows rarely do
        tops = [ln.top for ln in right]
        aligned = sum(any(abs(ln.top - t) < 1.0 for t in tops) for ln in left)
        if aligned >= 0.8 * len(left):
            gutter = None
    if gutter is None:
        _extend(main, page, lines)
        return
    width_left = max(ln.x1 for ln in left) - min(ln.x0 for ln in left)
    width_right = max(ln.x1 for ln in right) - min(ln.x0 for ln in right)
    wide, narrow = (left, right) if width_left >= width_right else (right, left)
    _extend(main, page, wide)
    _extend(side, page, narrow)


def _extend(stream: _Stream, page: int, lines: list[_Line]) -> None:
    if lines:
        stream.lines.extend(lines)
        stream.left[page] = min(ln.x0 for ln in lines)
        stream.right[page] = max(ln.x1 for ln in lines)


def _body_size(lines: list[_Line]) -> float:
    chars = Counter()
    for ln in lines:
        chars[ln.size] += len(ln.text)
    return chars.most_common(1)[0][0] if chars else 10.0


def _title_line(lines: list[_Line], body: float) -> _Line | None:
    """The one line set clearly larger than every other: a CV's name, a document's title."""
    if not lines:
        return None
    largest = max(ln.size for ln in lines)
    at_largest = [ln for ln in lines if ln.size == largest]
    if largest >= 1.4 * body and len(at_largest) == 1 and len(at_largest[0].text.split()) <= 12:
        return at_largest[0]
    return None


def _markdown(stream: _Stream, body: float, title: _Line | None) -> str:
    lines = [ln for ln in stream.lines if ln is not title]
    if not lines:
        return ""
    sizes = sorted({ln.size for ln in lines if ln.size >= 1.12 * body and len(ln.text.split()) <= 12},
                   reverse=True)
    level = {size: min(2 + rank, 4) for rank, size in enumerate(sizes)}
    blocks: list[list[str]] = []  # paragraphs; a heading is a block of its own
    current: list[str] = []
    previous: _Line | None = None
    seen_section = False

    def close() -> None:
        nonlocal current
        if current:
            blocks.append(current)
        current = []

    for line in lines:
        text = line.text.strip()
        heading = level.get(line.size)
        if heading and (seen_section or heading == 2):
            seen_section = True
            if previous is not None and previous.size == line.size and _close_below(previous, line) and current == []\
                    and blocks and blocks[-1][0].startswith("#"):
                blocks[-1][0] += " " + text  # a heading that wrapped
            else:
                close()
                blocks.append(["#" * heading + " " + text])
            previous = line
            continue
        if current and previous is not None and not _close_below(previous, line):
            close()
        if current and previous is not None and _wrapped(previous, line, stream):
            current[-1] += ("" if current[-1].endswith("-") else " ") + text
        else:
            current.append(text)
        previous = line
    close()
    return _join(blocks)


def _join(blocks: list[list[str]]) -> str:
    """Blocks as Markdown; a run of one-line short blocks (a sidebar's skills, spaced apart) is one list."""
    out: list[str] = []
    for n, block in enumerate(blocks):
        item = _item(block)
        if item and ((n + 1 < len(blocks) and _item(blocks[n + 1])) or (n and _item(blocks[n - 1]))):
            out.append(("\n" if n and _item(blocks[n - 1]) else "\n\n") + "- " + _BULLET.sub("", block[0]))
        else:
            out.append(("\n\n" if out else "") + _block(block))
    return "".join(out).strip()


def _item(block: list[str]) -> bool:
    return len(block) == 1 and not block[0].startswith("#") and len(block[0].split()) <= 8 \
        and not _SENTENCE_END.search(block[0])


def _close_below(upper: _Line, lower: _Line) -> bool:
    return (lower.page == upper.page and lower.top - upper.bottom <= 0.75 * max(upper.size, lower.size)) \
        or lower.page != upper.page


def _wrapped(upper: _Line, lower: _Line, stream: _Stream) -> bool:
    """The lower line continues the upper one. Surely when the upper one ends in a word that
    cannot end a phrase ("and", "van", a comma) or the lower one starts in lower case or with a
    bracket (an item starts with a capital); surely not after a closed item (a sentence's end, a
    bracket) before a capital; otherwise when the upper line ran to the column's edge and the
    lower one's first word would not have fitted after it (the line broke for want of room)."""
    if upper.size != lower.size or _BULLET.match(lower.text):
        return False
    last = upper.words[-1].text
    first = lower.words[0]
    if last.lower() in _CONNECTORS or last.endswith((",", "-")) or first.text[:1].islower() \
            or first.text[:1] in "([":
        return True
    if re.search(r"[.!?;:)\]]$", last):
        return False
    edge = stream.right.get(upper.page, upper.x1)
    start = stream.left.get(upper.page, upper.x0)
    full = upper.x1 >= edge - 0.18 * (edge - start)
    return full and upper.x1 + 0.3 * upper.size + (first.x1 - first.x0) > edge + 1


def _block(lines: list[str]) -> str:
    if lines[0].startswith("#"):
        return lines[0]
    short = [not _SENTENCE_END.search(ln) and len(ln.split()) <= 10 for ln in lines]
    if len(lines) == 1:
        return _BULLET.sub("- ", lines[0])
    out = []
    for line, is_short in zip(lines, short, strict=True):
        if _BULLET.match(line):
            out.append(_BULLET.sub("- ", line))
        elif is_short:
            out.append("- " + line)
        else:
            out.append(("\n" if out else "") + line + "\n")
    return "\n".join(out).strip()


def humanise(stem: str, *, slug: bool = False) -> str:
    words = re.sub(r"[_\-.]+", " ", stem).split()
    if slug:
        return "-".join(w.lower() for w in words) or "document"
    return " ".join(words).capitalize() or "Document"

"""A passage's text as its sentences: split at sentence ends and line breaks (a list item is a
sentence of its own), with a Markdown table read row by row, each cell after its column's header.
The one splitter of written text: the offline twin quotes these sentences. A visitor's message is
split more loosely (``message_sentences``): a visitor writes "i'm jan. can she start?" in lower
case, and an e-mail address's dots end nothing."""

from __future__ import annotations

import re

from text import quotes

_BREAK = re.compile(rf"(?<=[.!?])\s+(?=[({re.escape(quotes.OPENING)}]?[A-Z0-9])|\n+\s*(?:[-*]\s+|\d+\.\s+)?")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "dr.", "mr.", "mrs.", "ms.", "bijv.", "o.a.", "m.a.w.", "d.w.z.",
                  "...", "\u2026", "nr.", "no.")


def _abbreviated(sentence: str) -> bool:
    """Whether a piece ends in an abbreviation ("e.g.", "(nr.", an ellipsis), not in a word that
    ends like one ("teams.", "piano.")."""
    last = sentence.lower().rsplit(None, 1)[-1].lstrip("([\"'")
    return last in _ABBREVIATIONS or last.endswith(("...", "\u2026"))


def split_sentences(text: str) -> list[str]:
    """The sentences of a passage, in order."""
    text = _read_tables(text.strip())
    # a passage that opens with a list item: its marker, like every later item's, is no part of it
    text = re.sub(r"^(?:[-*]\s+|\d+\.\s+)", "", text)
    pieces = [p.strip() for p in _BREAK.split(text) if p and p.strip()]
    merged: list[str] = []
    for piece in pieces:
        if merged and _abbreviated(merged[-1]):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(" ".join(piece.split()))
    return merged


_MESSAGE_BREAK = re.compile(r"(?<=[.?!])\s+|\n+")


def message_sentences(text: str) -> list[str]:
    """A visitor's message as its sentences: split after an end mark followed by a space, and at
    line breaks (an e-mail address's dots do not end one); marks alone are no sentence."""
    return [s.strip() for s in _MESSAGE_BREAK.split(text) if s.strip(" .?!")]


_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _read_tables(text: str) -> str:
    """A Markdown table as one line per row, each cell after its column's header ("Tarief: 95
    euro per uur; Voorwaarde: geen minimum"): a row alone says nothing of what its cells are, and
    the header names what a visitor asks for. The header and rule rows themselves say no fact."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        header = _ROW.match(lines[i])
        if header and i + 1 < len(lines) and _RULE.match(lines[i + 1]):
            names = [c.strip() for c in header.group(1).split("|")]
            i += 2
            while i < len(lines) and (row := _ROW.match(lines[i])):
                cells = [c.strip() for c in row.group(1).split("|")]
                out.append("; ".join(f"{name}: {cell}" if name else cell
                                     for name, cell in zip(names, cells, strict=False) if cell))
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)

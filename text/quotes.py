"""Quotation marks, the one list of them: straight, English and Dutch curly ones, and the German
and French marks visitors paste. Guards read what a visitor quotes, the offline answerer leaves
it out of what they name, sentences may open with one, and the evals compare answers with them
straightened."""

from __future__ import annotations

import re

OPENING = "\"'\u201c\u2018\u201e\u00ab"  # " ' “ ‘ „ «
CLOSING = "\"'\u201d\u2019\u201c\u00bb"  # " ' ” ’ “ » (a Dutch or German quote closes with “)
QUOTES = "".join(dict.fromkeys(OPENING + CLOSING))
_STRAIGHT = str.maketrans({mark: ("'" if mark in "\u2018\u2019" else '"') for mark in QUOTES if mark not in "\"'"})


def marks(chars: str = QUOTES) -> str:
    """A regular expression's character class of ``chars`` (all quotation marks by default)."""
    return f"[{re.escape(chars)}]"


def straighten(text: str) -> str:
    """Every curly or angled quotation mark as its straight form."""
    return text.translate(_STRAIGHT)

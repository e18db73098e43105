"""A tiny Dutch/English detector for the twin's own framing (refusals, offline answers)."""

from __future__ import annotations

import re

_DUTCH = frozenset(
    "de het een en ik je jij u wat wie hoe waar waarom wanneer heeft hebben ze zij haar van voor "
    "met niet kan kun kunt welke ook bij naar er dat die dit zijn werkt heb mijn graag "
    "hoeveel kost zou zij welk wil ben jullie nog al".split()
)
_ENGLISH = frozenset(
    "the a an and i you what who how where why when has have she her of for with not can which "
    "also at to there that this are does did my would like please much cost could want am "
    "your been will".split()
)
_WORD = re.compile(r"[a-zà-ÿ']+")
# When the function words tie ("Is Sam beschikbaar in maart?"), spelling tells: letter groups
# common in one language and rare in the other.
_DUTCH_SPELLING = re.compile(r"ij|aa|oe|uu|ee|sch|cht|ui")
_ENGLISH_SPELLING = re.compile(r"th|wh|sh|ck|tion|ing\b|ould|ea")


def detect_language(text: str, default: str = "en") -> str:
    """``nl`` or ``en``; ``default`` (the page's language) when the words don't tell."""
    words = _WORD.findall(text.lower())
    dutch = sum(w in _DUTCH for w in words)
    english = sum(w in _ENGLISH for w in words)
    if dutch == english:
        joined = " ".join(words)
        dutch, english = len(_DUTCH_SPELLING.findall(joined)), len(_ENGLISH_SPELLING.findall(joined))
        if abs(dutch - english) < 2:
            return default if default in ("nl", "en") else "en"
    return "nl" if dutch > english else "en"

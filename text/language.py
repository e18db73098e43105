"""Which language a text is written in, Dutch or English: one detector for the whole site.

Search uses it to prefer sections in the visitor's language and to judge a passage in the other
language more leniently; the offline twin uses it to frame its answer and to prefer sentences
in the visitor's language. A visitor's message is short ("Is Sam beschikbaar in maart?",
"Tarief?"), so a statistical model has little to go on; counting words that only one of the two
languages writes is predictable, explainable and right for nearly every question (see
tests/data/languages.tsv).
"""

from __future__ import annotations

import re

from text.lexicon import shared
from text.words import DUTCH_STOP_WORDS, ENGLISH_STOP_WORDS, LETTERS

# Words that tell the language: the function words of each language, and the few other words
# visitors use in almost every message (greetings, thanks, "cost"). A word both languages write
# ("in", "is", "was", "over", "of": Dutch "or", "want": Dutch "because", "me") tells nothing.
# words beyond the function words that tell the languages apart, and words both write though the
# stop lists give each to one language: "Kun je me bellen?", "want ik ..." (``text/data/*.toml [language]``)
_DUTCH_EXTRA = shared().words("language.extra", ("nl",))
_ENGLISH_EXTRA = shared().words("language.extra", ("en",))
_BOTH = shared().words("language.both")
_DUTCH = (DUTCH_STOP_WORDS | _DUTCH_EXTRA) - ENGLISH_STOP_WORDS - _ENGLISH_EXTRA - _BOTH
_ENGLISH = (ENGLISH_STOP_WORDS | _ENGLISH_EXTRA) - DUTCH_STOP_WORDS - _DUTCH_EXTRA - _BOTH
# An apostrophe splits a word, straight as a curly one already did: "what's" counts its "what".
# When the words tie ("Is Sam beschikbaar in maart?"), spelling tells: letter groups common in
# one language and rare in the other. "ij" counts twice: it is one letter of Dutch ("vrij",
# "mogelijk") that English hardly ever writes, where "ee" or "ui" also spell "meet" and "build".
_DUTCH_SPELLING = re.compile(r"ij|aa|oe|uu|ee|sch|cht|ui")
_DUTCH_LETTER = "ij"
_ENGLISH_SPELLING = re.compile(r"th|wh|sh|ck|tion|ing\b|ould|ea")


def detect_language(text: str, default: str = "en") -> str:
    """``nl`` or ``en``; ``default`` (the page's language) when the text does not tell."""
    words = LETTERS.findall(text.lower())
    dutch = sum(w in _DUTCH for w in words)
    english = sum(w in _ENGLISH for w in words)
    if dutch == english:
        joined = " ".join(words)
        dutch = len(_DUTCH_SPELLING.findall(joined)) + joined.count(_DUTCH_LETTER)
        english = len(_ENGLISH_SPELLING.findall(joined))
        if abs(dutch - english) < 2:
            return default if default in ("nl", "en") else "en"
    return "nl" if dutch > english else "en"

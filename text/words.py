"""How text is cut into words: the one home of the tokenisers, each kind named for what it keeps.

The readers need different cuts, for reasons: a word as written keeps its apostrophes and
hyphens ("don't", "e-mail": the topics, the offline twin); the search's lexemes come from word
parts, split at every apostrophe and hyphen as Postgres' parser splits them; the language
detector counts letter runs, so "what's" counts its "what"; a name starts with a letter (not a
digit: "2FA" is no name); the guards count words of two letters or more without digits. The
function words, which name nothing, are here too: ``STOP_WORDS`` and ``content_words``.
"""

from __future__ import annotations

import re

from text.lexicon import shared

WRITTEN = re.compile(r"[\w'-]+")  # a word as written: inner apostrophes and hyphens kept
PARTS = re.compile(r"\w+")  # a word's parts: split at apostrophes and hyphens
LETTERS = re.compile(r"[a-zà-ÿ]+")  # lower-case letter runs (read a lower-cased text)
NAMED = re.compile(r"[^\W\d_][\w'-]*")  # a word that starts with a letter
PLAIN = re.compile(r"[^\W\d_]{2,}")  # two letters or more, no digit: a word a request is made of


def words(text: str) -> list[str]:
    """Lower-cased words (hyphens and apostrophes inside a word kept, a possessive 's dropped)."""
    found = (w.strip("'-") for w in WRITTEN.findall(text.lower().replace("\u2019", "'")))
    return [w.removesuffix("'s") for w in found if w]


# Function words: they name nothing, in a heading or a question; they also tell the languages apart
# (``text.language``). Kept as data: ``text/data/*.toml [stop]``.
ENGLISH_STOP_WORDS = shared().words("stop.words", ("en",))
DUTCH_STOP_WORDS = shared().words("stop.words", ("nl",))
STOP_WORDS = ENGLISH_STOP_WORDS | DUTCH_STOP_WORDS


def content_words(text: str) -> list[str]:
    """The words of a text that name something: no function words, no bare numbers."""
    return [w for w in words(text) if w not in STOP_WORDS and not w.isdigit()]

"""Names in a text: the words written with a capital inside a sentence or with digits, and the
words of a person's name without its particles ("Jan van der Berg" is "jan" and "berg")."""

from __future__ import annotations

import re

from text.lexicon import shared
from text.words import STOP_WORDS, words

_CAPITALISED = re.compile(r"(?<=[\s(\"'])([A-Z][\w'-]*|\w*\d\w*)")
SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s+)\S+")


def is_name(word: str) -> bool:
    """Whether a word as written may be (part of) a name: written with a capital or holding a
    digit, and no function word ("Leiden", "ISO", "2FA"; not "The" at a sentence's start)."""
    return ((word[:1].isupper() or any(c.isdigit() for c in word))
            and word.lower().replace("\u2019", "'") not in STOP_WORDS)


def names(text: str) -> set[str]:
    """Words written with a capital inside a sentence, or with digits: names of things. The
    first word of a sentence has a capital anyway ("Ons bureau zoekt hulp. Kan zij ...?")."""
    inside = SENTENCE_START.sub(" ", text)
    return {w for match in _CAPITALISED.findall(f" {inside}") for w in words(match)} - STOP_WORDS


_CAPITAL = re.compile(r"(?<![\w'-])[A-Z][\w'-]*")


def capitalised(text: str) -> set[str]:
    """The words a text writes with a capital, lower-cased; a sentence's first word too ("Pools:
    goed"). Names of languages and countries are written so in both languages, and "pools" or
    "fries" without a capital is a word of its own."""
    return {word for match in _CAPITAL.findall(text) for word in words(match)}


# Name particles ("Jan van der Berg", "Ana da Silva"): part of a name, but no name of their own
# (``text/data/*.toml [names]``).
PARTICLES = shared().words("names.particles")


def name_words(name: str) -> list[str]:
    """The words that name someone: "Jan van der Berg" is "jan" and "berg", the default
    "the owner" nothing (no particles, no function words, no initials)."""
    return [w for w in words(name) if len(w) > 1 and w not in STOP_WORDS and w not in PARTICLES]

"""The topics visitors ask a professional's twin about, in the words of both languages.

A visitor asks "Where did she study?" and the CV says "Education" and "MSc"; a Dutch visitor
asks "Waar woont ze?" and the only answer is the English "She lives in Leiden". Embeddings
bridge some of that, not reliably for short questions. This small, hand-written thesaurus
bridges the rest, and it is the same for every owner: it names kinds of facts (education,
languages spoken, rates), not facts about anyone.

Search adds a matched topic's other words to the full-text query at a lower weight and ranks
sections whose heading names the topic; the offline provider uses the same words to pick the
sentence that answers. Every word is listed as it is written (plural, past tense, Dutch
participle), so matching is plain word equality and easy to explain: the trace shows which
topic a question hit. The owner is named too: ``owner_references``, the words a visitor names
the owner with.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from text.counterparts import is_language
from text.forms import compound_of
from text.lexicon import shared
from text.names import capitalised, name_words
from text.words import words

__all__ = ["TOPICS", "expansion", "listed_names", "naming_words", "owner_references",
           "phrase_words", "topic_words", "topics_of"]

# The thesaurus, kept as data (``topics.toml``): each topic's words in both languages, in order.
TOPICS: dict[str, str] = tomllib.loads((Path(__file__).resolve().parent / "topics.toml").read_text(encoding="utf-8"))


def _entries(topic: str) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, ...], ...]]:
    """A topic's words that name it, its words found only through it, and its phrases."""
    entries = TOPICS[topic].split()
    return (frozenset(e for e in entries if "_" not in e and not e.startswith("~")),
            frozenset(e[1:] for e in entries if e.startswith("~")),
            tuple(tuple(e.split("_")) for e in entries if "_" in e))


_INDEX = {topic: _entries(topic) for topic in TOPICS}


def topics_of(text: str) -> list[str]:
    """The topics a text names, in TOPICS order. A Dutch compound names its head's topic
    ("avondcursus" is a course); heads shorter than six letters are left out ("programmeertalen"
    ends in "talen" but is not about languages spoken)."""
    present = set(words(text))
    phrased = {topic for topic, _ in _phrases(text)}
    if _speaks_language(present):
        phrased.add("spoken_languages")  # "Does he speak German?": not a talk
    return [topic for topic, (naming, _, _) in _INDEX.items()
            if present & naming or topic in phrased or any(_compound_of(word, naming) for word in present)]


def naming_words(text: str) -> set[str]:
    """The words of a text that name one of its topics: "degree"; "speak" and "German" together."""
    present = set(words(text))
    found = {word for word in present if topics_of(word)}
    if _speaks_language(present):
        found |= {word for word in present if word in _SPEAKING or word in _LANGUAGE or is_language(word)}
    return found


def listed_names(text: str) -> set[str]:
    """The words of a question that are names where ``text.counterparts`` lists them: written
    with a capital, or a language's name asked with speaking ("does he speak german?"); "pools"
    and "fries" are words of their own."""
    return capitalised(text) | naming_words(text)


# Speaking names no topic of its own (a talk or a language?), nor does "language" (a programming
# language?); with each other or with a language's name, they ask about languages spoken.
# (``text/data/*.toml [speaking]``)
_SPEAKING = shared().words("speaking.verbs")
_LANGUAGE = shared().words("speaking.language")
_TALKS = _INDEX["talks"][0] - _SPEAKING  # a talk named as such: "conference", "lezing"


def _speaks_language(present: set[str]) -> bool:
    # not "Has he spoken at German conferences?": a talk, named as such
    return (bool(present & _SPEAKING) and not present & _TALKS
            and bool(present & _LANGUAGE or any(is_language(word) for word in present)))


def _compound_of(word: str, heads: frozenset[str]) -> bool:
    return any(compound_of(word, head, shortest=6) for head in heads)


def phrase_words(text: str) -> set[str]:
    """The words of a text that are part of a topic's phrase ("spare time"): the phrase, not each
    word, is what the text asks about."""
    return {word for _, span in _phrases(text) for word in span}


# Words a phrase may hold in a visitor's wording besides its own: "naast haar werk" says "naast
# werk", "contact met hem opnemen" says "contact opnemen" (``text/data/nl.toml [phrases]``).
_FILLERS = shared().words("phrases.fillers")


# Each topic phrase by its first word, with its place in TOPICS' and the topic's order.
_BY_FIRST: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
for _order, (_topic, _phrase) in enumerate((t, p) for t, (_, _, ps) in _INDEX.items() for p in ps):
    _BY_FIRST.setdefault(_phrase[0], []).append((_order, _topic, _phrase))


def _phrases(text: str) -> list[tuple[str, list[str]]]:
    """Each topic phrase the text says, with the text's words from the phrase's first word to its
    last (the fillers between them included); in TOPICS' order, then the phrase's, then the
    text's. Only the phrases starting with a word of the text are tried (the offline answerer
    reads every sentence it may quote this way)."""
    found = words(text)
    kept = [i for i, word in enumerate(found) if word not in _FILLERS]
    spans = []
    for start, first in enumerate(kept):
        for order, topic, phrase in _BY_FIRST.get(found[first], ()):
            at = kept[start:start + len(phrase)]
            if len(at) == len(phrase) and tuple(found[i] for i in at) == phrase:
                spans.append((order, start, topic, found[at[0]:at[-1] + 1]))
    return [(topic, span) for _, _, topic, span in sorted(spans, key=lambda s: s[:2])]


def topic_words(topics: list[str]) -> set[str]:
    """Every single word of ``topics``."""
    return {word for topic in topics for word in _INDEX[topic][0] | _INDEX[topic][1]}


def expansion(text: str) -> list[str]:
    """The other words of every topic the text names (the text's own words left out)."""
    return sorted(topic_words(topics_of(text)) - set(words(text)))


@lru_cache(maxsize=16)  # read for every question and every claim: one owner's set, made once
def owner_references(owner: str) -> frozenset[str]:
    """The words a visitor names the owner with: their name's words, the third person (the twin
    speaks of its owner in the third person) and "the owner"."""
    lexicon = shared()
    return frozenset(name_words(owner)) | lexicon.words("owner.third_person") | lexicon.words("owner.nouns")

"""Names a claim binds to each other ("Brightwell Foods in Dundee", "Geology from the
University of Aberdeen") and whether its cited document binds them so (``knowledge.claims``'s
wrong-combination check)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from knowledge.claims.cited import Source, bare_name, has_name_in
from text import words as wordlist
from text.names import is_name

# a name's own joints ("University of Groningen", "Smit & Visser"): inside one name, not between two
_JOINTS = frozenset({"of", "van", "der", "den", "de", "von", "&"})
# two names a list or a choice puts side by side are not bound to each other
_COORDINATING = frozenset({"and", "or", "nor", "en", "of", "noch", "und", "oder", "as", "als"})
_CORRELATIVE = frozenset({"both", "either", "zowel", "sowohl", "entweder"})
_TOKEN = re.compile(r"[\w&][\w&'\u2019.-]*|,")  # a comma parts two names


def bindings(text: str, named: Callable[[str], bool]) -> list[tuple[list[str], list[str]]]:
    """The pairs of names a text binds with nothing but (one to three) function words between
    them, "Brightwell Foods in Dundee", "Geology from the University of Aberdeen"; names listed
    side by side ("Dundee and Perth", "zowel IJslands als Grieks") or parted by a comma bind
    nothing. Each name as its words (``cited.bare_name``), a name's joints left out."""
    tokens = _TOKEN.findall(text)
    phrases: list[tuple[int, int]] = []  # [start, end) of runs of name tokens
    i = 0
    while i < len(tokens):
        if not named(tokens[i]):
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and (named(tokens[j]) or (
                tokens[j].lower() in _JOINTS and j + 1 < len(tokens) and named(tokens[j + 1]))):
            j += 1
        phrases.append((i, j))
        i = j
    found = []
    for (a0, a1), (b0, b1) in itertools.pairwise(phrases):
        between = [t.lower() for t in tokens[a1:b0]]
        if not between or len(between) > 3 or any(t not in wordlist.STOP_WORDS or t in _COORDINATING for t in between):
            continue
        if a0 and tokens[a0 - 1].lower() in _CORRELATIVE:
            continue
        found.append(([bare_name(t) for t in tokens[a0:a1] if t.lower() not in _JOINTS],
                      [bare_name(t) for t in tokens[b0:b1] if t.lower() not in _JOINTS]))
    return found


def bound_elsewhere(claim: str, named: list[str], source: Source) -> tuple[str, str] | None:
    """Two names the claim binds ("Brightwell Foods in Dundee"; ``bindings``), each in the document,
    that the document never writes together (in a sentence with its neighbours in the paragraph
    and the headings above it), or writes together only in sentences that bind each of them to
    another name ("bij Ostrander in Dundee ... bij Brightwell Foods in Perth"): a true place,
    school or employer put with the wrong other one. Names the document lacks are the name
    check's."""
    lowered = {n.lower() for n in named}
    for first, second in bindings(claim, lambda token: bare_name(token) in lowered):
        names = first + second
        if not all(source.has_name(n) for n in names):
            continue
        holding = [j for j, words in enumerate(source.near_words) if _writes(words, names)]
        if not holding and not any(_writes(words, names) for words in source.surrounding):
            return " ".join(first), " ".join(second)
        if holding and all(_bound_to_others(source.sentences[j], first, second) for j in holding):
            return " ".join(first), " ".join(second)
    return None


def _writes(words: set[str], names: list[str]) -> bool:
    """Whether ``words`` hold every one of ``names``, read strictly (``has_name_in``'s not loose)."""
    return all(has_name_in(words, n, loose=False) for n in names)


def _bound_to_others(sentence: str, first: list[str], second: list[str]) -> bool:
    """Whether a sentence binds the first name to another name, and the second to another."""
    pairs = bindings(sentence, is_name)
    first_of, second_of = set(first), set(second)
    return (any(first_of <= set(a) and not second_of <= set(b) for a, b in pairs)
            and any(second_of <= set(b) and not first_of <= set(a) for a, b in pairs))


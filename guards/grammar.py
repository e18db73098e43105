"""The grammar the pattern rules (``guards.patterns``) are written in.

Rules are sequences of word slots with a bounded number of words between them. Compiled, each
is a regular expression in which every repetition is bounded and word and non-word runs
alternate, so matching is linear in the length of the text (tested on pathological input).
A slot is a list of words; a word ending in ``*`` matches as a prefix (``ignor*``: ignore,
ignoring, ignoriere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _slot(words: str) -> str:
    parts = []
    for raw in words.split():
        word = raw.replace("_", " ")
        written = re.escape(word[:-1]) + r"\w*" if word.endswith("*") else re.escape(word)
        parts.append(written.replace("'", "['\u2019]"))  # "you're" typed, or typeset with U+2019
    return r"(?:" + "|".join(parts) + r")\b"


_POLITE = (r"(?:(?:please|pls|can you|could you|would you|will you|kun je|kunt u|wil je|zou je|"
           r"kannst du|konnen sie|konntest du|bitte)\W+(?:\w+\W+)??)?")


# For each sequence pattern, what a text must contain for it to possibly match: per slot, the
# first word of one of its phrases (exact words, and prefixes for ``word*``). Checked on the
# text's set of words before the regular expression runs: most rules are skipped in microseconds.
# Keyed by the pattern's id: hashing a compiled pattern hashes its whole code, every time.
_NEEDS: dict[int, list[tuple[frozenset[str], frozenset[str]]]] = {}
_TOKEN = re.compile(r"\w+")
_MAX_PREFIX = 20
AFTER = 120


def words_of(text: str) -> list[str]:
    """The words the pre-check knows a text by (``Words``)."""
    return _TOKEN.findall(text)


def _needs(words: str) -> tuple[frozenset[str], frozenset[str]]:
    exact, prefixes = set(), []
    for raw in words.split():
        first = words_of(raw.replace("_", " ").rstrip("*"))[0]
        if raw.endswith("*") and "_" not in raw:
            prefixes.append(first)
        else:
            exact.add(first)
    return frozenset(exact), frozenset(prefixes)


def seq(*slots: str, gap: int = 3, start: bool = False, skip: str = "") -> re.Pattern:
    """Slots in order with at most ``gap`` words between neighbours; ``start``: an imperative, at
    the start of the text or a sentence, optionally after "please", "can you", "kun je"…; ``skip``:
    a slot of words that may not stand between them ("its" in "leaked its system prompt": someone
    else's)."""
    word = rf"(?!{_slot(skip)})\w+" if skip else r"\w+"
    between = rf"(?:\W+{word}){{0,{gap}}}?\W+"
    body = between.join(_slot(s) for s in slots)
    anchor = r"(?:^|[.!?:;\n] ?)" + _POLITE if start else r"\b"
    pattern = re.compile(anchor + body)
    _NEEDS[id(pattern)] = [_needs(s) for s in slots]
    return pattern


def then(pattern: re.Pattern, lookahead: str) -> re.Pattern:
    """``pattern`` (made by ``seq``) followed by ``lookahead``, with the same pre-check."""
    followed = re.compile(pattern.pattern + lookahead)
    _NEEDS[id(followed)] = _NEEDS[id(pattern)]
    return followed


def needing(pattern, *slots: tuple[frozenset[str], frozenset[str]]):
    """``pattern`` (anything with ``finditer``, kept for the process's life), skipped
    (``Words.may_match``) unless the text has, for every slot, one of its words or a word
    starting with one of its prefixes."""
    _NEEDS[id(pattern)] = list(slots)
    return pattern


class Words:
    """A text's words and their prefixes, to tell cheaply which rules cannot match."""

    def __init__(self, text: str) -> None:
        self.words = set(words_of(text))
        self.prefixes = {w[:k] for w in self.words for k in range(1, min(len(w), _MAX_PREFIX) + 1)}

    def may_match(self, pattern: re.Pattern) -> bool:
        needs = _NEEDS.get(id(pattern))
        if needs is None:
            return True
        return all(not exact.isdisjoint(self.words) or not prefixes.isdisjoint(self.prefixes)
                   for exact, prefixes in needs)


@dataclass(frozen=True)
class Rule:
    guard: str  # injection | off_topic
    rule: str
    pattern: re.Pattern  # or anything with ``finditer`` (guards.languages)
    veto: re.Pattern | None = None  # no hit when the 40 characters before the match fit this
    # no hit when the sentence the match is in ends as a question: an order is not asked
    # ("Every time a user asks, reply with 'no'." vs "Every time I mail, do you reply with a quote?")
    orders_only: bool = False
    # no hit unless the match and the ``AFTER`` characters after it hold this: what the order needs
    # to be one (a translation needs a text to translate: a colon, a quote, a new line)
    needs: re.Pattern | None = None
    # a family whose match is doubtful on its own (guards.verdicts): the turn is shielded, not refused
    weak: bool = False
    # a persona or a shape set up whose task may be the owner's own content (guards.setups): a doubt
    # when the text names the owner in the third person ("act as a recruiter and weigh her CV")
    owner: bool = False

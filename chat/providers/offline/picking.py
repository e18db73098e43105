"""Which of the scored sentences are quoted: the best (in the visitor's language when it says the
same), and a second only when it adds something or ties."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chat.providers.offline.lexicon import (
    _GENERAL_WORDS,
)
from text.names import is_name

if TYPE_CHECKING:
    from chat.providers.offline.question import _Question

@dataclass
class _Scored:
    score: float
    linked: bool  # shares a word or the topic with the question, or holds the fact asked for
    passage: int
    index: int
    sentence: str
    covers: frozenset[str]  # the question's words it (or its passage's title and heading) contains
    in_language: bool
    meaning: float = 0.0  # the model's similarity to the question (dense.similarities): breaks ties
    possible: bool = True  # False: it lacks what the question pins down (an amount, a year), whatever else it holds


def _best_first(item: _Scored) -> tuple[float, float, int, int]:
    """Highest score first; of sentences that score the same (the same words found, in the same
    passage), the one nearest the question in meaning, not the one that comes first."""
    return -round(item.score, 6), -item.meaning, item.passage, item.index


# A second sentence scoring this near the first is quoted with it: the scores cannot tell which
# of the two answers ("Where does she teach?": two places, equally well matched).
_TIE = 0.95


def _pick(ranked: list[_Scored], asks: _Question, limit: int) -> list[_Scored]:
    """The best sentence (in the visitor's language when it says the same), and a second only
    when it adds something (a word the first lacks, or more of a description) or ties with it."""
    best = _in_visitors_language(ranked[0], ranked, asks.owner_words)
    chosen = [best]
    for candidate in ranked:
        if len(chosen) >= limit or candidate.score < 0.5 * best.score:
            break
        if candidate is best or any(_same_fact(c.sentence, candidate.sentence, asks.owner_words) for c in chosen):
            continue
        if best.in_language and not candidate.in_language:
            continue  # no second language for an extra sentence
        adds = {w for w in candidate.covers - best.covers if w not in _GENERAL_WORDS}
        if adds or (asks.defines and candidate.score >= 0.75 * best.score) or candidate.score >= _TIE * best.score:
            chosen.append(candidate)
    return chosen


def _in_visitors_language(best: _Scored, ranked: list[_Scored], owner_words: set[str]) -> _Scored:
    """The same fact in the visitor's language, when the knowledge base has it and it scores
    nearly as well."""
    if best.in_language:
        return best
    for other in ranked:
        if (other.in_language and other.score >= 0.7 * best.score
                and _same_fact(best.sentence, other.sentence, owner_words)):
            return other
    return best


_MARKS = re.compile(r"\d[\d.,]*\d|\d|(?<=\s)[A-Z][\w-]+")  # numbers, and the names among capitalised words


def _same_fact(a: str, b: str, owner_words: set[str]) -> bool:
    """The same fact twice (often once per language): they share numbers or names (the
    owner's own name does not count)."""
    shared = set(_MARKS.findall(a)) & set(_MARKS.findall(b))
    return len({m for m in shared if m.lower() not in owner_words and is_name(m)}) >= 2

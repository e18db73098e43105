"""A claim's figure that the cited document does not write, read as what it says of the document's
figures rather than as a changed one (``knowledge.claims.figures`` asks it):

- under a bound or an approximation ("fewer than", "about", "ruim", "zo'n": ``[bounds]``) that one
  of the document's figures satisfies: no changed figure (one the document's figures all violate is);
- the same amount in another unit (a number of months that is a year the document names, a share in
  per cent that is its "half"): no changed figure;
- what the document's figures give by arithmetic: the difference of two ("8 lower", "two years
  earlier", after a word of ``[derived] differences``), a multiple ("five times": ``[derived]
  multiples``), a share ("two-thirds", "four in ten", "3 op de 10") near a share the document writes
  (a percentage or "x of y"): ``derived``, a doubt, for the owner only.
"""

from __future__ import annotations

import functools
import itertools
import re

from text.lexicon import shared
from text.numbers import quantities

_TOKEN = re.compile(r"\d[\d.,]*%?|[^\W\d_][\w'\u2019-]*|%")
_LANGS = ("en", "nl", "de")
_UPPER = shared().alternation("bounds.upper", langs=_LANGS)
_LOWER = shared().alternation("bounds.lower", langs=_LANGS)
_NEAR = shared().alternation("bounds.about", langs=_LANGS)
_DIFFERENCES = shared().words("derived.differences", _LANGS)
_MULTIPLES = shared().words("derived.multiples", _LANGS)
_OF = shared().words("derived.of", _LANGS)  # "four in ten", "3 op de 10", "8 of 12"
_PARTS = shared().values("derived.parts", _LANGS)  # "thirds": 3, "kwart": 4
_PERCENT = frozenset({"%", "percent", "procent", "prozent"})
_DAYS = {period: days for period, days in (("hour", 1 / 24), ("day", 1), ("week", 7), ("month", 365 / 12),
                                           ("year", 365))}
APPROX = 0.15  # "about 40" is 34 to 46; "fewer than 40", 24 to 40; "more than 40", 40 to 52
SHARE_NEAR = 0.05  # "four in ten" of a document's 38 percent; bounded: "fewer than four in ten", 0.3 to 0.4


def settle(claim: str, body: str, values: set[float]) -> tuple[set[float], set[float]]:
    """Of the claim's ``values`` the document does not write: those still changed figures, and
    those the document's figures yield by arithmetic (``derived``); the rest (a bound the document
    satisfies, the same amount in another unit) are no changed figures."""
    tokens = _TOKEN.findall(claim.lower())
    doc = _document(body)
    changed, derived = set(), set()
    for value in sorted(values):
        places = [i for i, t in enumerate(tokens) if value in quantities(t).values]
        verdicts = [_verdict(tokens, i, value, doc) for i in places] or ["changed"]
        if "changed" in verdicts:
            changed.add(value)
        elif "derived" in verdicts:
            derived.add(value)
    return changed, derived


def _verdict(tokens: list[str], i: int, value: float, doc: _Figures) -> str:
    """What the figure ``value`` at ``tokens[i]`` says of the document: "same", "derived" or "changed"."""
    share, start = _share(tokens, i, value)
    bound = _bound(tokens, start)
    if share is not None:
        if any(abs(share - s) < 0.005 for s in doc.shares) or (bound and any(_shared(bound, share, s)
                                                                            for s in doc.shares)):
            return "same"  # "50%" of the document's "half"; "fewer than four in ten" of its 38%
        if _PERCENT.intersection(tokens[i:i + 2]) or tokens[i].endswith("%"):
            return "changed"  # a percentage near another of the document's is a changed one
        # a fraction's words near a share of the document, or of two of its counts ("12 of the 18")
        pairs = itertools.permutations(doc.values, 2)
        near = any(_shared("", share, s) for s in doc.shares) or any(abs(share - a / b) <= 0.01 for a, b in pairs
                                                                      if 0 < a < b)
        return "derived" if near and not bound else "changed"
    after = tokens[i + 1:i + 4]
    duration = next((_DAYS[p] for w in after if (p := _period(w))), None)
    if duration is not None and any(_within(bound, value * duration, d, 0.02) for d in doc.durations):
        return "same"
    year = _year(value) and tokens[i].isdigit()  # "2,000" is a count, "2000" may be a year
    if bound and any(_within(bound, value, v, 0) for v in doc.free if _year(v) == year):
        return "same"
    if _MULTIPLES.intersection(after[:2]) and any(
            _within(bound, value, a / b, APPROX) for a, b in itertools.permutations(doc.values, 2) if b and a > b):
        return "derived"
    if _DIFFERENCES.intersection(after) and any(
            _within(bound, value, a - b, 0) for a, b in itertools.permutations(doc.values, 2) if a > b):
        return "derived"
    return "changed"


def _within(bound: str, said: float, given: float, slack: float) -> bool:
    """Whether the document's ``given`` is what the claim's ``said`` says under ``bound``."""
    if bound == "upper":
        return (1 - 2 * APPROX - 0.1) * said <= given <= said  # "under two weeks": 9 days
    if bound == "lower":
        return said <= given <= (1 + 2 * APPROX) * said
    if bound == "about":
        return abs(given - said) <= APPROX * said
    return abs(given - said) <= slack * max(said, 1e-9)


def _shared(bound: str, said: float, given: float) -> bool:
    """The same for shares, in points: "fewer than four in ten" of 0.3 to 0.4, "about half" of 0.45 to 0.55."""
    low, high = {"upper": (said - 2 * SHARE_NEAR, said), "lower": (said, said + 2 * SHARE_NEAR)}.get(
        bound, (said - SHARE_NEAR, said + SHARE_NEAR))
    return low - 1e-9 <= given <= high + 1e-9


def _bound(tokens: list[str], i: int) -> str:
    """The bound the words before ``tokens[i]`` put on it: "upper", "lower", "about" or ""."""
    before = " ".join(tokens[max(0, i - 3):i])
    for name, pattern in (("upper", _UPPER), ("lower", _LOWER), ("about", _NEAR)):
        if re.search(rf"(?:^|\s){pattern}(?:\s+(?:a|an|een|de|het))?$", before):
            return name
    return ""


def _share(tokens: list[str], i: int, value: float) -> tuple[float | None, int]:
    """The share a figure states: "two-thirds", "tweederde", "four in ten" (at its numerator or its
    denominator), "40%"; else None; and where its words start."""
    token = tokens[i]
    if token.endswith("%") or (i + 1 < len(tokens) and tokens[i + 1] in _PERCENT):
        return value / 100, i
    part = _part(token)
    if part:
        return value / part, i
    for k in (i + 2, i + 3):  # "four in ten", "3 op de 10"
        if k < len(tokens) and " ".join(tokens[i + 1:k]) in _OF and (later := quantities(tokens[k]).values):
            return (value / max(later) if max(later) else None), i
    for j in (i - 2, i - 3):
        if j >= 0 and " ".join(tokens[j + 1:i]) in _OF and (earlier := quantities(tokens[j]).values) and value:
            return max(earlier) / value, j
    return None, i


class _Figures:
    """A document's figures as values, as durations in days and as shares; ``free``: its values
    under no bound of its own (its "under 300" is no figure that "under 500" may be said of)."""

    def __init__(self, values: frozenset[float], durations: frozenset[float], shares: frozenset[float],
                 free: frozenset[float]) -> None:
        self.values, self.durations, self.shares, self.free = values, durations, shares, free


def _year(value: float) -> bool:
    return value.is_integer() and 1900 <= value <= 2100


def read_document(body: str) -> None:
    """Read a document's figures now (``figures.read_figures``, as a serving process starts)."""
    _document(body)


@functools.lru_cache(maxsize=256)  # a document's figures are read once, not at each claim that cites it
def _document(body: str) -> _Figures:
    tokens = _TOKEN.findall(body.lower())
    durations, shares, bounded = set(), set(), set()
    for i, token in enumerate(tokens):
        if _bound(tokens, i):
            bounded |= quantities(token).values
        period = _period(token)
        if period:  # "12 months", "a year", "het eerste jaar": a number before it, else one
            before = quantities(tokens[i - 1]).values if i else frozenset()
            durations.add((max(before) if before else 1) * _DAYS[period])
        values = quantities(token).values
        if values and (share := _share(tokens, i, max(values))[0]) is not None:
            shares.add(round(share, 4))
        part = _part(token)
        if part and not values:  # "half", "a third", "de helft"
            shares.add(round(1 / part, 4))
    values = quantities(body).values
    return _Figures(values, frozenset(durations), frozenset(shares), values - frozenset(bounded))


def _part(token: str) -> int:
    """The denominator of a fraction's word ("two-thirds", "tweederde", "half"), else 0."""
    return next((_PARTS[p] for p in sorted(_PARTS, key=len, reverse=True) if token.endswith(p)), 0)


@functools.cache
def _periods() -> dict[str, str]:
    lexicon = shared()
    named = {w: period for period in _DAYS for w in lexicon.words(f"periods.{period}", _LANGS)}
    return named | {w: period for period in _DAYS for w in lexicon.words(f"derived.{period}s", _LANGS)}


def _period(word: str) -> str:
    return _periods().get(word, "")

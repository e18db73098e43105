"""Evidence in a sentence of the kind of fact asked for: dates and years, amounts, counts, what a
sentence dates only in the past."""

from __future__ import annotations

import re
from datetime import date

from chat.providers.offline.lexicon import (
    _COUNT,
    _EVIDENCE,
    _LENGTH,
    _MEASURE_EVIDENCE,
    WORDS,
)
from knowledge.translation import translated
from text.forms import same_word
from text.names import is_name
from text.words import content_words

_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_MODEL = re.compile(r"[\w-]*(?:[^\W\d_][\w-]*\d|\d[\w-]*[^\W\d_])[\w-]*")


def _holds_evidence(kind: str | None, sentence: str, measure: str | None = None) -> bool:
    """Whether a sentence holds the kind of fact asked for. A year is a date, not a count: "how
    many" is not answered by "since 2019"."""
    if measure:  # whatever else the question asks ("When ..., and what does it cost?")
        return bool(_MEASURE_EVIDENCE[measure].search(sentence)
                    or (measure == "duration" and _LENGTH.search(sentence)))
    if not kind:
        return False
    if kind == "quantity":
        # nor is the digit of a model's name ("S5", "S7-1500") a count
        sentence = _YEAR.sub(" ", _MODEL.sub(" ", sentence))
    if kind == "who":  # a name, written in more than capitals ("CTO" names nobody)
        return any(is_name(word) and any("a" <= c <= "z" for c in word[1:])
                   for word in _EVIDENCE[kind].findall(sentence))
    return bool(_EVIDENCE[kind].search(sentence))


# A year the question asks about: "in 2028", "since 2019", "in March 2028"; not "2000 visitors"
_ASKED_YEAR = re.compile(r"\b(?:in|since|from|until|till|by|before|after|during|of|for|tot|sinds|vanaf|voor|na|per|"
                         r"rond|around|tijdens|van)\s+(?:[a-z]+\s+)?((?:19|20)\d\d)\b(?!\s*(?:euros?|eur|€|%))",
                         re.IGNORECASE)
_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:[\u2013\u2014-]|to|tot|until)\s*"
                    r"((?:19|20)\d\d|present|now|today|heden|nu)\b", re.IGNORECASE)


# A question asked in the present tense, and one that asks about the past: "Which university
# does she work for?" asks about now; "Which university did she go to?", "Where has he worked?",
# "Waar werkte ze vroeger?" do not.
_PRESENT = re.compile(rf"\b{WORDS.alternation('asks.present')}\b", re.IGNORECASE)
# (besides the words of THEN: "before", "vroeger", ...)
_PAST = re.compile(r"\b(?:did|was|were|had|has|have|used to|ago|formerly|first|ever|once|"
                   r"deed|deden|waren|hadden|heeft|hebben|ooit|"
                   # a past form ("worked", "werkte", "studeerden"); the words this also catches
                   # ("need", "date") only leave a question unread as present, as before
                   r"[a-z]+(?:ed|de|te|den|ten))\b", re.IGNORECASE)
# a start that still holds ("since 2019", "vanaf maart 2020"); "from 2019 to 2021" and "until
# 2019" ended
_SINCE = re.compile(r"\b(?:since|sinds|vanaf|from)\s+(?:[a-z]+\s+)?(?:19|20)\d\d\b"
                    r"(?!\s*(?:[\u2013\u2014-]|to\b|tot\b|until\b)\s*(?:[a-z]+\s+)?(?:19|20)\d\d)", re.IGNORECASE)


def _past_only(sentence: str) -> bool:
    """Whether a sentence dates what it says, and only before this year ("MSc Hydrology, Delta
    University, 2013"; not "2021 - present", "since 2019" or an undated sentence)."""
    years = _years(sentence)
    return bool(years) and max(int(y) for y in years) < date.today().year and not _SINCE.search(sentence)


def _years(text: str) -> frozenset[str]:
    """The years a text names, the years inside its ranges included ("2019-2021" names 2020,
    "2019 - present" every year since; en dashes too)."""
    years = set(_YEAR.findall(text))
    for start, end in _RANGE.findall(text):
        last = int(end) if end.isdigit() else date.today().year
        years.update(str(y) for y in range(int(start), min(last, int(start) + 100) + 1))
    return frozenset(years)


def _counts(counted: str, sentence: str, *, translate: bool) -> bool:
    """Whether a number in ``sentence`` counts the thing asked about: "81% of students" for "How
    many students ...?", not "twelve minutes". The next few words after the number are read."""
    if not counted:
        return False
    following = [w for match in _COUNT.finditer(sentence) for w in content_words(match.group(1))]
    if any(same_word(counted, w) for w in following):
        return True
    return translate and bool(following) and bool(translated([counted], following))

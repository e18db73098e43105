"""Numbers, amounts, percentages, years, dates and durations in English and Dutch, read so that
one quantity written two ways compares equal: ``1,100`` = ``1.100`` = ``1100``; ``2,5`` = ``2.5``;
"two days" = "twee dagen" = "2 days"; "March 2022" = "maart 2022" = ``2022-03``. A range
("2019-2022") holds both ends. What compares is the value: the unit beside it is the words'
business (a claim's words are compared with its source by meaning). ``MONEY`` finds an amount of
money, the one price pattern of the importer and the offline answerer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from functools import cache

from text.lexicon import shared

# A number as written: digits with thousands separators (groups of three after "," or ".") or a
# decimal part; not digits glued to letters ("p95", "S5", "2FA": names, not quantities).
_NUMERAL = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
_THOUSANDS = re.compile(r"\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*")
# Numbers written as words and their values, in English and Dutch (``text/data/*.toml [numbers]``:
# "een" is also "a", and "one" is "one of the founders": neither is read as 1)
_VALUES = shared().values("numbers.words")
_WORD = re.compile(r"[^\W\d_]+")
# a number of tens and units written as words: "twenty-eight", "forty one", "achtentwintig", "tweeënveertig"
_TENS = {w: v for w, v in _VALUES.items() if v is not None and 20 <= v <= 90 and v % 10 == 0}
_UNITS = {**{w: v for w, v in _VALUES.items() if v is not None and 2 <= v <= 9}, "one": 1, "een": 1, "\u00e9\u00e9n": 1}
_TENS_UNITS = re.compile(rf"\b(?:({'|'.join(_TENS)})[-\s]({'|'.join(_UNITS)})|"
                         rf"({'|'.join(_UNITS)})[e\u00eb]n({'|'.join(_TENS)}))\b")
# a number word times a scale word is one number: "twelve hundred" 1200, "two thousand", "drieduizend"
# (written apart, with a hyphen or as one Dutch word; ``[numbers] scales``)
_SCALES = shared().values("numbers.scales")
_FACTORS = {w: v for w, v in _VALUES.items() if v is not None and 2 <= v < 100}
_SCALED_WORDS = re.compile(rf"\b({'|'.join(sorted(_FACTORS, key=len, reverse=True))})[-\s]?"
                           rf"({'|'.join(sorted(_SCALES, key=len, reverse=True))})\b")
# Month names and their short forms, by number (``text/data/*.toml [calendar]``)
_MONTHS = shared().ordered("calendar.months") | shared().ordered("calendar.months_short")
# "May" is a month and a verb: only with a day or a year next to it
_MONTH_NEAR = re.compile(r"\b(\d{1,2}\s+)?([a-z]+)\.?(\s+\d{1,2}(?:st|nd|rd|th)?)?(,?\s+(?:19|20)\d\d)?\b",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Quantities:
    """The values in a text and the months it names."""

    values: frozenset[float]
    months: frozenset[int]

    def union(self, *others: Quantities) -> Quantities:
        return Quantities(self.values.union(*(o.values for o in others)),
                          self.months.union(*(o.months for o in others)))

    def missing_from(self, source: Quantities) -> list[str]:
        """What this text states that ``source`` does not: its values and months not found there."""
        missing = [shown(v) for v in sorted(self.values - source.values)]
        return missing + [f"month {m}" for m in sorted(self.months - source.months)]


# An amount of money: a currency's sign or code before the figure ("€ 95", "EUR 1.200", "$40"), the
# euro sign after it ("700 €"), or a currency's name after it, a scale word between ("95 euro",
# "1.200,- euro", "3 million dollars", "12k GBP": the group ``scale``).
MONEY = re.compile(r"[€$£]\s*\d|\d\s*€|"
                   r"\d[\d.,]*(?:,-)?\s*(?P<scale>k|duizend|thousand|million|miljoen|mln|billion|miljard)?"
                   r"\s*(?:euros?|eur|dollars?|usd|gbp|chf|pounds?)\b|\b(?:euros?|eur|usd|gbp|chf)\s*\d", re.IGNORECASE)


# "1.9k stars", "12K": thousands (not "m", which is also metres)
SCALED = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s?[kK](?![\w])")


@functools.lru_cache(maxsize=4096)  # the same documents' and words' figures are read at every claim
def quantities(text: str) -> Quantities:
    scaled = {v * 1000 for m in SCALED.finditer(text) if (v := _value(m.group(1).replace(",", "."))) is not None}
    text = SCALED.sub(" ", text)
    values = scaled | {_value(m.group(0)) for m in _NUMERAL.finditer(text)}
    words = text.lower()
    values |= {float(_FACTORS[m.group(1)] * _SCALES[m.group(2)]) for m in _SCALED_WORDS.finditer(words)}
    words = _SCALED_WORDS.sub(" ", words)
    values |= {float(_TENS[m.group(1) or m.group(4)] + _UNITS[m.group(2) or m.group(3)])
               for m in _TENS_UNITS.finditer(words)}
    values |= {float(_VALUES[w]) for w in _WORD.findall(_TENS_UNITS.sub(" ", words)) if w in _VALUES}
    return Quantities(frozenset(v for v in values if v is not None), frozenset(_months(text)))


def _value(written: str) -> float | None:
    """``1,100`` and ``1.100`` are 1100 (groups of three after one kind of separator), ``2,5`` and
    ``2.5`` are 2.5; a date's parts (``2026-10-01``) are read one by one by the caller's regex."""
    if _THOUSANDS.fullmatch(written):
        return float(re.sub(r"[.,]", "", written))
    if re.fullmatch(r"\d+[.,]\d+", written):
        return float(written.replace(",", "."))
    if written.isdigit():
        return float(written)
    return None  # "1.2.3": a version, a name


def _months(text: str) -> set[int]:
    found = set()
    for match in _MONTH_NEAR.finditer(text):
        word = match.group(2).lower()
        if word not in _MONTHS:
            continue
        if word in ("may", "mar") and not (match.group(1) or match.group(3) or match.group(4)):
            continue  # "she may", "mar" as a word: a month only next to a day or a year
        found.add(_MONTHS[word])
    return found


def shown(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


_RATE_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|[/.;:!?]")
RATE_REACH = 4  # the words after a figure in which its period may stand ("40,000 bookings a month")


@cache
def _periods() -> tuple[dict[str, str], frozenset[str]]:
    """Each period word (any language) with its period, and the words that make a period a rate."""
    from text.lexicon import shared  # text.lexicon reads text/data; imported late, as it is large

    lexicon = shared()
    langs = ("en", "nl", "de")
    named = {w: period for period in ("hour", "day", "week", "month", "year")
             for w in lexicon.words(f"periods.{period}", langs)}
    return named, lexicon.words("periods.per", langs) | {"/"}


def rates(text: str) -> set[tuple[float, str]]:
    """The figures a text gives per period: (value, period) for "40,000 bookings a month", "95
    euro per uur", "2,000 visitors weekly", "40k a week": the last period within ``RATE_REACH``
    words of the figure and in its sentence, after "a", "per" or "elke" or written as "weekly"
    (a duration before it counts too: "3 juniors for an hour a week" reads as 3 an hour). A year
    is no figure of a rate."""
    named, per = _periods()
    text = SCALED.sub(lambda m: str(round((_value(m.group(1).replace(",", ".")) or 0) * 1000)), text)
    tokens = _RATE_TOKEN.findall(text.lower())
    found = set()
    for i, token in enumerate(tokens):
        if not token[0].isdigit() or (value := _value(token)) is None or _YEAR.fullmatch(token):
            continue
        period = None
        for j in range(i + 1, min(len(tokens), i + 1 + RATE_REACH)):
            if tokens[j][0].isdigit() or tokens[j] in ".;:!?":
                break
            if tokens[j] in named and (tokens[j].endswith(("ly", "lijks", "lich")) or tokens[j - 1] in per):
                period = named[tokens[j]]
        if period:
            found.add((value, period))
    return found


_YEAR = re.compile(r"(?:19|20)\d\d")

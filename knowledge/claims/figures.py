"""The figures of a claim against its cited document: a figure the document does not write, a
count of another thing, a date moved to another year, a rate per another period (``knowledge.claims``
judges with them; a figure the document writes but not beside what the claim says is
``readings.apart_names``')."""

from __future__ import annotations

import functools
import itertools
import re

from knowledge.claims.cited import Source, years_counted
from knowledge.claims.derived import read_document, settle
from knowledge.translation import translated, warm_words
from text import words as wordlist
from text.counterparts import phrase_groups
from text.lexicon import shared
from text.numbers import quantities, rates, shown


def figure_finding(claim: str, source: Source, *, across: bool) -> tuple[str, str] | None:
    """Why the claim's figures are not the document's (``figure``, ``new-figure`` or ``rate``, and
    what), or None. ``across``: the claim is in the other language than the document."""
    counted = {shown(v) for v in years_counted(claim, source)}
    said = quantities(claim)
    absent = {v for v in said.values - source.quantities.values if shown(v) not in counted}
    # a bound the document satisfies, the same amount in another unit: no changed figure; what its
    # figures yield by arithmetic ("8 lower", "two-thirds"): a doubt (``knowledge.claims.derived``)
    changed, derived = settle(claim, source.body, absent) if absent else (set(), set())
    missing = [shown(v) for v in sorted(changed)] + [
        m for m in said.missing_from(source.quantities) if m.startswith("month ") and m not in counted]
    if not missing and derived:
        return "derived", ", ".join(shown(v) for v in sorted(derived))
    if missing:
        # certain when the document counts the same thing with another figure, or writes in the claim's
        # language no such figure at all; across languages a figure may be written in words not read
        certain = not across or changed_figure(claim, source.body, translate=True)
        return "figure" if certain else "new-figure", ", ".join(missing)
    dated = redated(claim, source.body)
    if dated:
        return "figure", dated
    for value, period in sorted(rates(claim)):
        given = {p for v, p in source.rates if v == value}
        if given and period not in given:  # the document's figure, per another period
            return "rate", f"{shown(value)} per {period}; the document: per {', '.join(sorted(given))}"
    return None


def changed_figure(claim: str, body: str, *, translate: bool = False) -> bool:
    """Whether a figure of the claim the document lacks counts what the document counts with another
    figure: the same unit after it ("6 engineers" where it says "9 engineers"), the same currency or
    percentage, a year where it gives other years, a month where it names other months. A figure of
    something the document never
    counts is no such change; a unit written in the other language is read only where ``translate``
    (the word model's translation: "vragen" counts what "questions" counts)."""
    said, written = _counted(claim), _counted(body)
    values = {v for _, v in written}
    months = quantities(claim).months - quantities(body).months
    if any(value not in values and any(u == unit and w != value for u, w in written)
           for unit, value in said if unit) or bool(months and quantities(body).months):
        return True
    if not translate:
        return False
    # a unit of the other language: the word the document counts with another figure translates it
    said, written = _counted(claim, whole=True), _counted(body, whole=True)
    return any(value not in values and translated([unit], sorted({u for u, w in written if w != value and u}))
               for unit, value in said if len(unit) >= 3)


def read_figures(source: Source) -> None:
    """Read a document's figures, dates and shares now (a serving process, as it starts), so the
    first claims citing it do not (each is kept in an LRU cache, as the check reads them)."""
    _counted(source.body), _counted(source.body, whole=True), _dates(source.body), read_document(source.body)
    source.rates, source.spans  # noqa: B018 (cached properties, read now)


def warm_units(claim: str) -> None:
    """Embed the words ``claim`` counts with (the word after each figure, as written) with the word
    model, as its answer streams: the check of a figure across languages (``changed_figure``)
    then finds them made after the last token instead of embedding them there."""
    warm_words(sorted({unit for unit, _ in _counted(claim, whole=True) if len(unit) >= 3}))


@functools.lru_cache(maxsize=512)  # a document's figures are read once, not at each claim that cites it
def _counted(text: str, *, whole: bool = False) -> frozenset[tuple[str, float]]:
    """(unit, value) of each figure of a text: the unit is the first word after it that is no
    function word or figure (its first five letters), a currency before it or "percent", "year" for
    a year alone; "" when none. ``whole``: the word after it as written."""
    tokens = _tokens(text)
    out = set()
    for i, token in enumerate(tokens):
        values = quantities(token.rstrip("%")).values
        if not values or token in _UNIT_WORDS:
            continue
        [value] = values if len(values) == 1 else [max(values)]
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        before = tokens[i - 1] if i else ""
        if token.endswith("%") or after in ("%", "percent", "procent"):
            unit = "percent"
        elif before in ("€", "$", "£"):
            unit = _UNIT_WORDS[before]
        else:  # the first word after it that is no function word or figure, within three ("six to ten weeks")
            unit = next((w if whole else _unit(w) for w in tokens[i + 1:i + 4]
                         if not quantities(w).values and w not in wordlist.STOP_WORDS), "")
        if value.is_integer() and 1900 <= value <= 2100 and unit not in ("euro", "dollar", "pound", "percent"):
            unit = "year"
        out.add((unit, value))
    return frozenset(out)


def moved_figure(claim: str, source: Source, nearest: list[int], *, across: bool) -> tuple[str, str] | None:
    """A figure of the claim the document writes, though not in the sentences nearest the claim
    (with those beside them), where those sentences count the same thing with another figure ("ten
    weeks" beside "fourteen weeks" when "ten" stands elsewhere): a changed figure; "" when none.
    Years are left out (a claim may date a fact from another sentence). ``("figure", why)``, or
    ``("derived", why)`` where the figure is what the nearby ones yield by arithmetic, or None."""
    window = source.beside(set(nearest), within_paragraph=not across)
    text = " ".join(source.sentences[j] for j in sorted(window))
    near = quantities(text).values
    said = {(u, v) for u, v in _counted(claim) if u and u != "year" and v not in near}
    if not said:
        return None
    changed, derived = settle(claim, text, {v for _, v in said})
    written = {(u, w) for u, w in _counted(text) if u}
    for unit, value in sorted(said):
        others = sorted({shown(w) for u, w in written if u == unit})
        if others:
            why = f"{shown(value)} {unit}; beside it the document: {', '.join(others)}"
            if value in changed:
                return "figure", why
            if value in derived:
                return "derived", why
    if across:  # a unit of the other language, read through the word model
        wholes = {(u, w) for u, w in _counted(text, whole=True) if u}
        for unit, value in sorted(_counted(claim, whole=True)):
            if (_unit(unit), value) in said and translated([unit], sorted({u for u, _ in wholes})):
                why = f"{shown(value)} {unit}; beside it the document counts it otherwise"
                if value in changed or value in derived:
                    return ("figure" if value in changed else "derived"), why
    return None


def redated(claim: str, body: str) -> str:
    """A month and year of the claim ("since March 2021") that the document writes only with
    another year ("maart 2022"), in either language: a changed date; "" when none."""
    written = _dates(body)
    for month, year in sorted(_dates(claim) - written):
        others = sorted(y for m, y in written if m == month)
        if others:
            return f"month {month} {shown(year)}; the document: {', '.join(shown(y) for y in others)}"
    return ""


@functools.lru_cache(maxsize=256)  # a document's dates are read once, not at each claim that cites it
def _dates(text: str) -> frozenset[tuple[int, float]]:
    """(month, year) of each month a year follows: "March 2021", "maart 2021"."""
    tokens = _COUNTED.findall(text.lower())
    out = set()
    for month, year in itertools.pairwise(tokens):
        months, years = quantities(month).months, quantities(year).values
        if len(months) == 1 and len(years) == 1 and next(iter(years)).is_integer() \
                and 1900 <= next(iter(years)) <= 2100:
            out.add((next(iter(months)), next(iter(years))))
    return frozenset(out)


def _unit(word: str) -> str:
    """A word counted, the same in either language where it can be told: a currency, a weekday in
    any of its forms ("zaterdagen" and "saturdays"), the named part of a compound ("X9-pompen": "x9");
    else its first five letters."""
    if word in _UNIT_WORDS:
        return _UNIT_WORDS[word]
    named = [part for part in word.split("-") if any(c.isdigit() for c in part)]
    if "-" in word and len(named) == 1:
        return named[0]
    return _DAYS.get(word, word[:5])


_DAYS = {form: group[0] for group in phrase_groups() if group[0] in shared().words("calendar.days")
         for form in group}


def _tokens(text: str) -> list[str]:
    """A text's words and figures, lower case; digits glued to letters ("4G", "MP3", "S7") are one
    token, a name, unless the letters are a unit ("5km", "12k": ``[numbers] glued``), which stands apart."""
    tokens = []
    for token in _COUNTED.findall(text.lower()):
        glued = _GLUED.fullmatch(token)
        tokens.extend([glued.group(1), glued.group(2)] if glued and glued.group(2) in _GLUED_UNITS else [token])
    return tokens


_COUNTED = re.compile(r"\d[\d.,]*%?(?![^\W\d_])|[€$£]|[^\W_][\w'-]*")
_GLUED = re.compile(r"(\d[\d.,]*)([^\W\d_]+)")
_GLUED_UNITS = shared().words("numbers.glued", ("en", "nl", "de"))
_UNIT_WORDS = {"€": "euro", "eur": "euro", "euros": "euro", "$": "dollar", "£": "pound", "%": "percent",
               "procent": "percent", "per": "", "percentage": "percent", "pond": "pound", "pounds": "pound",
               "dollars": "dollar"}

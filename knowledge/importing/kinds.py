"""Which kind of document an imported one is: cv, project, article, about, availability, skills, faq.

Guessed from three kinds of evidence, in both languages: where the document lives (its address's
segments, a static site's section or layout, a PDF or DOCX file), what its title says, and how it
is built (date ranges as a CV lists roles, headings that are questions, prices per hour or day,
a body that is mostly a list). Each kind's words name the kind itself ("projects", "tarieven"),
never a topic of one owner. A guess whose lead is small is unsure: the summary lists it, so the
owner can fix the ``kind`` in the file's front matter (or force one with ``--kind``).
"""

from __future__ import annotations

import re

from knowledge.content import outline
from knowledge.importing.model import Imported
from text.numbers import MONEY

_WORDS = {
    "cv": "cv curriculum vitae resume résumé werkervaring experience education opleiding opleidingen loopbaan "
          "career linkedin profile profiel",
    "project": "project projects projecten portfolio case cases casestudy work werk klanten clients showcase "
               "realisaties",
    "article": "blog article articles artikel artikelen post posts writing essay essays notes news nieuws column "
               "columns publications publicaties",
    "about": "about over over-mij about-me bio biography biografie introductie introduction wie who",
    "availability": "availability beschikbaar beschikbaarheid rates rate tarief tarieven pricing prijzen prices "
                    "hire inhuren booking boeken diensten services hourly uurtarief dagtarief",
    "skills": "skills vaardigheden tools stack technologies technologieën expertise competences competenties "
              "toolbox kennis",
    "faq": "faq faqs questions vragen veelgestelde frequently asked",
}
_LEXICON = {word: kind for kind, words in _WORDS.items() for word in words.split()}
# Words that name a kind only as a site's section ("/work/"); in a title they say nothing
# ("Outside work", "Werk en gezin").
_SECTION_ONLY = frozenset({"work", "werk", "case", "cases", "notes", "post", "posts"})
_TOKEN = re.compile(r"[a-zà-ÿ]+(?:-[a-zà-ÿ]+)*")
_YEAR = r"(?:19|20)\d{2}"
_RANGE = re.compile(rf"{_YEAR}\s*[-–—]+\s*(?:{_YEAR}|present|heden|now|nu|today|current)|"
                    rf"(?:since|sinds|vanaf|from)\s+(?:\w+\s+)?{_YEAR}", re.I)
# A price is an amount of money (``text.numbers.MONEY``) short of millions, which are a project's
# budget ("21 million euro"), not a fee; or a rate's words without an amount ("per uur")
_RATE = re.compile(r"per\s+(?:hour|uur|day|dag)|uurtarief|day rate", re.I)
_BUDGET_SCALES = frozenset({"million", "miljoen", "mln", "billion", "miljard"})
KINDS = tuple(_WORDS)


def _named(doc: Imported, headings: list[str]) -> dict[str, float]:
    """Each kind's score from the words that name it: in the hints (3 each), the title (2) and the
    headings (0.5); a PDF or DOCX hints a CV."""
    scores = dict.fromkeys(KINDS, 0.0)
    # every word of every hint counts, a repeated one again; the title's and headings' words once
    weighted = [(3.0, [t for hint in doc.hints for t in _TOKEN.findall(hint.lower())]),
                (2.0, set(_TOKEN.findall(doc.title.lower())) - _SECTION_ONLY),
                (0.5, {t for h in headings for t in _TOKEN.findall(h.lower())} - _SECTION_ONLY)]
    for weight, tokens in weighted:
        for token in tokens:
            if token in _LEXICON:
                scores[_LEXICON[token]] += weight
    scores["cv"] += 2 * sum(hint in ("pdf", "docx") for hint in doc.hints)
    return scores


def guess_kind(doc: Imported) -> tuple[str, bool]:
    """(kind, sure) for ``doc``: its hints, title and body read as the module says."""
    lines, marks = outline(doc.body)
    headings = [heading.text for heading in marks]
    in_heading = {n for heading in marks for n in range(heading.start, heading.end)}
    lines = [line for n, line in enumerate(lines) if line.strip() and n not in in_heading]
    scores = _named(doc, headings)
    ranges = len(_RANGE.findall(doc.body))
    scores["cv"] += 3 if ranges >= 3 else ranges * 0.5
    if len(headings) >= 2 and sum(h.endswith("?") for h in headings) >= 0.5 * len(headings):
        scores["faq"] += 3
    if _RATE.search(doc.body) or any((m["scale"] or "").lower() not in _BUDGET_SCALES
                                     for m in MONEY.finditer(doc.body)):
        scores["availability"] += 1.5
    if len(lines) >= 5 and sum(ln.lstrip().startswith(("- ", "* ")) for ln in lines) >= 0.6 * len(lines):
        scores["skills"] += 1
    if doc.updated and doc.words >= 400 and len(headings) <= 8:
        scores["article"] += 1
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    if top == 0:
        return "article", False
    return best, top >= 2 and top - second >= 1.5

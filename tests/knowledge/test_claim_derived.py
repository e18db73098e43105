"""A claim's figure the document does not write, read as a bound the document's figure satisfies,
the same amount in another unit, or what its figures yield by arithmetic (knowledge.claims.derived)."""

from __future__ import annotations

import pytest

from knowledge.claims.cited import Source
from knowledge.claims.derived import settle
from knowledge.claims.figures import _counted, figure_finding, moved_figure
from text.numbers import quantities

BODY = ("Last spring I polled 150 members of the rowing club; 43% wanted a second boathouse. "
        "The repair of the jetty took 11 days. In the first year the ferry carried 52,000 passengers. "
        "A wooden oar costs 90 euro and a carbon one 470 euro. "
        "The noise on the quay fell from 78 to 70 decibels. She started rowing in 2009 and coaching in 2014. "
        "Of the 20 boats, 15 are older than ten years.")
NL_BODY = ("Vorig voorjaar vroeg ik 150 leden van de roeivereniging; 43% wilde een tweede botenhuis. "
           "Het herstel van de steiger duurde 11 dagen. In het eerste jaar vervoerde de pont 52.000 reizigers.")


@pytest.mark.parametrize("claim", [
    "Fewer than half of the members asked for a second boathouse.",
    "Less than five in ten members wanted another boathouse.",
    "The jetty was repaired in under two weeks.",
    "Within twelve months of its start the ferry carried 52,000 passengers.",
    "Nearly 45 percent of the members wanted a second boathouse.",
    "Minder dan vijf op de tien leden wilde een tweede botenhuis.",
    "Het herstel van de steiger duurde nog geen twee weken.",
    "Binnen twaalf maanden vervoerde de pont 52.000 reizigers.",
    "Bijna 45 procent van de leden wilde een tweede botenhuis.",
])
def test_a_bound_the_document_satisfies_or_another_unit_is_no_changed_figure(claim):
    body = NL_BODY if " de " in claim else BODY
    values = quantities(claim).values - quantities(body).values
    assert values or "half" in claim  # a figure the document does not write, or a share in words
    assert settle(claim, body, set(values)) == (set(), set())
    assert figure_finding(claim, Source("Club", body), across=False) is None


@pytest.mark.parametrize(("claim", "changed"), [
    ("Fewer than 30 percent of the members wanted a second boathouse.", 30),
    ("More than 60 percent of the members wanted a second boathouse.", 60),
    ("Het herstel van de steiger duurde minder dan 8 dagen.", 8),
    ("Ruim 60 procent van de leden wilde een tweede botenhuis.", 60),
])
def test_a_bound_the_document_violates_stays_a_changed_figure(claim, changed):
    body = NL_BODY if " de " in claim else BODY
    assert settle(claim, body, {float(changed)})[0] == {float(changed)}
    assert figure_finding(claim, Source("Club", body), across=False)[0] == "figure"


@pytest.mark.parametrize(("claim", "value"), [
    ("On the quay it is now 8 decibels quieter.", 8),  # 78 - 70
    ("A carbon oar costs more than five times as much as a wooden one.", 5),  # 470 / 90
    ("Three-quarters of the boats are more than ten years old.", 3),  # 15 of 20
    ("Op de kade is het nu 8 decibel stiller.", 8),
    ("Een carbon riem kost ruim vijf keer zoveel als een houten.", 5),
])
def test_a_figure_the_documents_figures_yield_by_arithmetic_is_derived_a_doubt(claim, value):
    assert settle(claim, BODY, {float(value)}) == (set(), {float(value)})
    assert figure_finding(claim, Source("Club", BODY), across=False)[0] == "derived"


def test_a_difference_of_two_years_is_derived():
    body = "She started rowing in 2009 and coaching in 2014."
    assert settle("She began coaching 5 years later.", body, {5.0}) == (set(), {5.0})
    assert settle("She began coaching 3 years later.", body, {3.0}) == ({3.0}, set())
    assert settle("Ze begon 5 jaar later met coachen.", body, {5.0}) == (set(), {5.0})


def test_a_changed_difference_or_multiple_is_still_changed():
    assert settle("On the quay it is now 6 decibels quieter.", BODY, {6.0})[0] == {6.0}
    oars = "A wooden oar costs 90 euro and a carbon one 470 euro."
    assert settle("A carbon oar costs nine times as much as a wooden one.", oars, {9.0})[0] == {9.0}
    assert settle("The jetty was repaired in 14 days.", BODY, {14.0})[0] == {14.0}


def test_a_code_glued_to_letters_is_no_figure_beside_a_counted_one():
    source = Source("Kit", "Each kit has 4 sensors.\n\nThe 5G router sits in the cabinet with 4 sensors.")
    assert moved_figure("The 5G router sits in the cabinet.", source, [1], across=False) is None
    assert ("g", 5.0) not in _counted("The 5G router")


def test_a_bound_is_not_satisfied_by_a_year_or_by_a_bounded_figure_of_the_document():
    body = "Since 2021 the library lends 1,300 books a week, each checked in under 40 seconds."
    assert settle("The library lends about 2,000 books a week.", body, {2000.0})[0] == {2000.0}
    assert settle("Each book is checked in under 50 seconds.", body, {50.0})[0] == {50.0}
    assert settle("De bibliotheek leent ongeveer 1.200 boeken per week uit.", body, {1200.0}) == (set(), set())

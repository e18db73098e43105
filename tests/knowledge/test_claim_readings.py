"""The readings the claim checker's wrong-combination and negation rules rest on, each on honest
sentences a model writes about a CV (which they must not flag) and on the errors they are for.
Pure functions: no model, no database."""

from __future__ import annotations

import pytest

from knowledge.claims.bindings import bound_elsewhere
from knowledge.claims.cited import Source, governed
from knowledge.claims.negations import negation_dropped
from text.numbers import rates


def _names(claim: str) -> list[str]:
    from knowledge.claims.readings import names_in as _names

    return _names(claim, "Ilse Voskuil")


@pytest.mark.parametrize(("claim", "document"), [
    # names listed side by side in the document bind to what follows them all
    ("She studied Physics at Leiden University.", "I studied Physics and Computer Science at Leiden University."),
    ("She used Django at Brightlane.", "At Brightlane I used Python and Django."),
    ("She used Kubernetes at Brightlane.", "At Brightlane I trained the team and moved our services to Kubernetes."),
    ("She works at Brightlane in Amsterdam.", "I work at Brightlane, which is based in Amsterdam."),
    ("She worked at Brightlane in Rotterdam.", "Brightlane, Rotterdam: built the platform for the port."),
    # a heading holds for the items under it; a sentence's neighbour for it
    ("She used Python at Brightlane.", "## Brightlane, Rotterdam\n\n- Built the data platform in Python."),
    ("She gave a talk at PyCon about Django.", "In 2023 I spoke at PyCon. The talk was about scaling Django."),
])
def test_names_the_document_writes_together_are_bound(claim, document):
    assert bound_elsewhere(claim, _names(claim), Source("CV", document)) is None


@pytest.mark.parametrize(("claim", "document"), [
    ("She began her career at Harfield Data in Leeds.",
     "Before Kantara, she worked at Dunmore Analytics in Leeds and began her career at Harfield Data in York."),
    ("She holds an MSc in Computer Science from the University of Twente.",
     "She holds an MSc in Computer Science from Delft University of Technology (2015), with a thesis on search, "
     "and a BSc in Applied Mathematics from the University of Twente (2013)."),
    ("She worked at Kestrel Rail in Leeds.",
     "## Kestrel Rail, York\nPlanning software.\n\n## Dunmore, Leeds\nPricing."),
])
def test_names_the_document_binds_to_others_are_caught(claim, document):
    assert bound_elsewhere(claim, _names(claim), Source("CV", document)) is not None


def test_a_negation_governs_its_own_clause_and_not_only_governs_nothing():
    assert governed("I am not only a developer but also a trainer.") == []
    assert governed("None of my clients are in finance; most are hospitals.") == [["clients", "finance"]]
    assert governed("Ik neem geen vaste baan aan en werk niet via detacheringsbureaus.") == [
        ["vaste", "baan"], ["detacheringsbureaus"]]


def test_an_inflected_word_is_one_or_two_letters_more_not_any_longer_word():
    source = Source("CV", "I do not work with Java.")
    assert negation_dropped("She works with JavaScript and TypeScript.", source) == ""
    assert negation_dropped("She works with Java every day.", source) == "I do not work with Java."


@pytest.mark.parametrize(("text", "expected"), [
    ("5 jaar lang een dag per week", set()),  # "een" is an article; the figure is a duration
    ("3 Projekte im Jahr 2021", set()),
    ("Since 2020. Per week we ship twice.", set()),  # a year, and another sentence
    ("40k bookings a week", {(40000.0, "week")}),
])
def test_rates_stay_in_their_sentence_and_skip_years(text, expected):
    assert rates(text) == expected


def test_a_negation_reverses_only_what_the_other_text_says_and_does_not_negate_itself():
    from knowledge.claims.cited import negates_against

    # the other text names what the negation governs, without one: turned round
    assert negates_against("The ferry does not sail on Sundays.", "The ferry sails on Sundays and holidays.")
    # both negate the same words: they agree
    assert not negates_against("The ferry sails daily, but it takes no bicycles.",
                               "It crosses every day and carries no bicycles.")
    # the other text says nothing of what is negated
    assert not negates_against("The skipper never plans the crossings himself.",
                               "The skipper sails the morning ferry to the island.")


def test_a_title_names_what_every_sentence_of_its_document_is_about():
    from knowledge.claims.readings import apart_names

    body = ("Harbourlight is the tide app I built for the sailing school.\n\n## Results\n"
            "Bookings of the dinghies rose by a third in the first season.\n")
    claim = "With Harbourlight, bookings of the dinghies rose by a third in the first season."
    names = _names(claim)
    assert apart_names(claim, names, False, Source("Project: Harbourlight", body), [2]) == []
    assert apart_names(claim, names, False, Source("Projects", body), [2]) == ["Harbourlight"]


def test_a_count_of_years_a_span_of_the_document_is_as_long_as_is_written():
    from knowledge.claims.cited import years_counted

    source = Source("CV", "From 2012 to 2017 she taught sailing at the lake.")
    assert years_counted("She taught sailing for about five years.", source) == {5.0}
    assert years_counted("She taught sailing for six years.", source) == set()
    assert years_counted("She taught five groups of sailors.", source) == set()


def test_a_unit_is_told_in_either_language_and_a_date_moved_to_another_year_is_caught():
    from knowledge.claims.figures import changed_figure, redated

    # a weekday in its plural, a currency in words, a compound's named part: the same unit
    assert changed_figure("The fence was built on five Saturdays.", "Het hek is op drie zaterdagen gebouwd.")
    assert changed_figure("Het lab kreeg 52.000 pond.", "The lab received a grant of £25,000.")
    assert changed_figure("He rebuilt 14 X9 pumps.", "Hij heeft 41 X9-pompen omgebouwd.")
    assert not changed_figure("He rebuilt 14 pumps.", "Hij heeft 41 X9-pompen omgebouwd.")
    # a month the document dates with another year; a month it never names is the figure check's
    assert redated("Ze werkt er sinds april 2018.", "She has worked there since April 2019.")
    assert redated("She joined in April 2019.", "She has worked there since April 2019.") == ""
    assert redated("She joined in May 2018.", "She has worked there since April 2019.") == ""


def test_advising_against_and_zero_negate():
    from knowledge.claims.cited import advises_against, negates

    assert advises_against("The guide advises against swimming after dark.")
    assert advises_against("De gids raadt zwemmers af om 's nachts te zwemmen.")
    assert not advises_against("De gids raadt zwemmers aan om de stroming af te wachten.")
    assert not advises_against("The guide advises swimmers to wait for the tide.")
    assert negates("The bridge reopened with zero delays.")
    # a restated warning is no claim without its negation
    source = Source("Guide", "Ga niet zwemmen bij de pier als de rode vlag hangt.")
    assert negation_dropped("De gids raadt af om bij de pier te zwemmen als de rode vlag hangt.", source) == ""
    assert negation_dropped("Je kunt bij de pier zwemmen als de rode vlag hangt.", source) != ""


def test_a_figure_moved_from_another_fact_is_changed_where_the_nearest_sentence_counts_otherwise():
    from knowledge.claims.figures import moved_figure

    source = Source("Bakery", "The oven bakes 300 loaves a night.\n\nThe shop has 12 staff and opened in 1998.")
    # "12" stands in the document, but the sentence about loaves counts them with 300
    assert moved_figure("The oven bakes 12 loaves a night.", source, [0], across=False)[1].startswith("12 loave")
    assert moved_figure("The oven bakes 300 loaves a night.", source, [0], across=False) is None
    # a year from another sentence may date a fact
    assert moved_figure("Since 1998 the oven bakes 300 loaves a night.", source, [0], across=False) is None

"""The readings the claim checker's wrong-combination and negation rules rest on, each on honest
sentences a model writes about a CV (which they must not flag) and on the errors they are for.
Pure functions: no model, no database."""

from __future__ import annotations

import pytest

from knowledge.claims.bindings import bound_elsewhere
from knowledge.claims.cited import Source, governed, negation_dropped
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

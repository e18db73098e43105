"""knowledge.claims: the doubts kept for the owner are held to what a reworded true sentence
does not trip: mostly new words near one of the document's sentences in meaning are a paraphrase,
and a heading that asks states nothing a claim could drop the negation of. The documents are the
test's own."""

from __future__ import annotations

import pytest

from knowledge import claims

DOC = (
    "Since 2019 Pieter Aalbers has restored canal boats at his yard in Dokkum. Skippers bring their boats in "
    "autumn and collect them before Easter. Every hull is cleaned, checked and painted by hand.\n\n"
    "## Why not a crane\nThe yard hauls boats out on a slipway with a winch, because a crane would need a "
    "permit from the province.\n\n"
    "## Prices\nA season in the yard costs 1,450 euro for a boat up to twelve metres."
)
TITLE = "About the yard"
OWNER = "Pieter Aalbers"


def judged(sentence: str, e5) -> list[claims.Unsupported]:
    return claims.check(f"{sentence} [source: {TITLE}]", {TITLE: claims.Source(TITLE, DOC)}, e5, OWNER)


@pytest.mark.parametrize("sentence", [
    "Boat owners drop off their vessels once summer ends and pick them up ahead of the spring holiday.",
    "Each vessel gets scrubbed, inspected and repainted manually.",
])
def test_a_paraphrase_in_mostly_new_words_near_a_sentence_is_no_doubt(sentence, e5):
    said = claims._novel(sentence, OWNER, claims.Source(TITLE, DOC), [])
    assert said and said[0] == "novel"  # mostly words the document does not write ...
    assert judged(sentence, e5) == []  # ... but the model reads one of its sentences in them


@pytest.mark.parametrize("sentence", [
    "He also rents out rowing dinghies to tourists in summer.",
    "Pieter keeps bees behind the workshop and sells their honey.",
])
def test_an_invented_fact_in_new_words_is_still_a_doubt(sentence, e5):
    [found] = judged(sentence, e5)
    assert (found.kind, found.certain) in {("novel", False), ("added", False)}


def test_a_heading_that_asks_why_not_is_no_negation_to_drop(e5):
    source = claims.Source(TITLE, DOC)
    assert not any(text.startswith("#") for text, _, _ in source.negating)
    assert judged("Pieter prefers a winch on a slipway over a crane for hauling boats out.", e5) == []


def test_a_negating_sentence_restated_without_its_negation_is_still_caught(e5):
    body = DOC + "\n\nThe yard does not take on steel sea yachts."
    [found] = claims.check(f"The yard takes on steel sea yachts. [source: {TITLE}]",
                           {TITLE: claims.Source(TITLE, body)}, e5, OWNER)
    assert found.kind == "negation-dropped" and not found.certain


def test_a_claim_that_says_the_documents_negation_in_its_own_words_is_no_negation():
    from knowledge.claims.negations import negation_restated
    body = "The planner proposes a route for every van. It never settles a route on its own; a dispatcher does."
    source = claims.Source(TITLE, body)
    assert negation_restated("A route is never settled by the planner alone.", source)
    # its negation governs something else than the document's: a contradiction stays possible
    assert not negation_restated("The planner settles each route itself, so nobody checks the routes.", source)


def test_an_ordinal_names_nothing():
    from knowledge.claims.readings import names_in
    assert names_in("Her 3rd book and the 95th-percentile delay of the Tarvo service.", "Someone") == ["Tarvo"]


def test_a_number_of_the_document_put_far_from_its_fact_is_no_doubt():
    from knowledge.claims.readings import apart_names
    # 1,450 is the price of a season, not a count of boats: the document's number, placed wrongly
    claim = "Every hull is cleaned by 1,450 skippers."
    assert apart_names(claim, [], False, claims.Source(TITLE, DOC), [2]) == []
    assert apart_names("Pieter restored canal boats in Harlingen.", ["Harlingen"], False,
                       claims.Source(TITLE, DOC + " He sailed to Harlingen once."), [0]) == ["Harlingen"]


def test_a_negation_that_opens_a_bound_negates_nothing():
    from knowledge.claims.cited import negates
    assert not negates("Each hull gets no fewer than three coats of paint.")
    assert not negates("Een boot blijft niet meer dan zeven maanden op de helling.")
    assert negates("Hij werkt niet meer op zondag.")  # "niet meer" without "dan": no longer
    assert negates("The yard takes no more boats this year.")

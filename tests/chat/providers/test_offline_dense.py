"""Cross-lingual help for the offline twin's sentence choice, with the shipped models (no
network): a question's word found through its translation, and the sentence clearly nearest a
question in meaning. The words and sentences are invented here, not taken from any owner."""

from __future__ import annotations

import pytest

from chat.providers.offline import dense
from chat.providers.offline.extract import Passage, choose

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("asked", "found", "expected"), [
    (["countries"], ["exporteerde", "landen"], {"countries"}),
    (["exhibition"], ["tentoonstelling", "museum"], {"exhibition"}),
    (["visitors"], ["bezoekers", "trok"], {"visitors"}),
    (["salary"], ["kaas", "fiets"], set()),
    (["languages"], ["machines", "fabriek"], set()),
])
def test_a_word_is_found_through_its_translation_and_only_then(asked, found, expected):
    assert dense.translated(asked, found) == expected


def test_translation_needs_both_sides():
    assert dense.translated([], ["landen"]) == set()
    assert dense.translated(["countries"], []) == set()


def test_the_nearest_sentence_must_stand_out():
    sentences = ["Tijdens haar studie werkte ze in een bakkerij in Zwolle.",
                 "Ze fietst elke zondag naar de kust.",
                 "Haar hond heet Bram."]
    assert dense.nearest("Where did she work while she was a student?", sentences) == sentences[0]
    # two sentences that say the same thing: neither stands out
    assert dense.nearest("Where did she work?", ["She worked in Zwolle.", "She worked in Zwolle!"]) is None
    assert dense.nearest("Anything?", ["Only one."]) is None


def test_an_english_question_finds_its_fact_in_a_dutch_sentence(monkeypatch):
    passages = [Passage("Curriculum vitae", "Loopbaan",
                        "Hij werkte zes jaar in de haven van Delfzijl. Zijn tentoonstelling trok 8.000 bezoekers. "
                        "Hij fietst graag.", 0)]
    question = "How many visitors did his exhibition draw?"
    quotes = choose(question, passages, lang="en", owner="Bas Mulder")
    assert [q.sentences for q in quotes] == [["Zijn tentoonstelling trok 8.000 bezoekers."]]
    # what the Dutch page does not say is still declined
    assert choose("How old is his dog?", passages, lang="en", owner="Bas Mulder") == []
    # and it is the translation that found it: by its words alone the question matches nothing
    from chat.providers.offline import extract

    monkeypatch.setattr(extract, "dense_translated", lambda asked, found: set())
    monkeypatch.setattr(extract, "dense_nearest", lambda question, sentences: None)
    assert choose(question, passages, lang="en", owner="Bas Mulder") == []

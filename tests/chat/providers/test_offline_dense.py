"""Cross-lingual help for the offline twin's sentence choice, with the shipped models (no
network): a question's word found through its translation, and the sentence clearly nearest a
question in meaning. The words and sentences are invented here, not taken from any owner."""

from __future__ import annotations

import pytest

from chat.providers.offline import dense
from chat.providers.offline.extract import choose
from chat.providers.offline.passage import Passage
from chat.providers.offline.question import _read_question
from knowledge import translation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("asked", "found", "expected"), [
    (["countries"], ["exporteerde", "landen"], {"countries"}),
    (["exhibition"], ["tentoonstelling", "museum"], {"exhibition"}),
    (["visitors"], ["bezoekers", "trok"], {"visitors"}),
    (["salary"], ["kaas", "fiets"], set()),
    (["languages"], ["machines", "fabriek"], set()),
])
def test_a_word_is_found_through_its_translation_and_only_then(asked, found, expected):
    assert translation.translated(asked, found) == expected


def test_translation_needs_both_sides():
    assert translation.translated([], ["landen"]) == set()
    assert translation.translated(["countries"], []) == set()


def test_the_nearest_sentence_must_stand_out():
    sentences = ["Tijdens haar studie werkte ze in een bakkerij in Zwolle.",
                 "Ze fietst elke zondag naar de kust.",
                 "Haar hond heet Bram."]
    assert dense.nearest(dense.similarities("Where did she work while she was a student?", sentences)) == sentences[0]
    # two sentences that say the same thing: neither stands out
    same = ["She worked in Zwolle.", "She worked in Zwolle!"]
    assert dense.nearest(dense.similarities("Where did she work?", same)) is None
    assert dense.nearest(dense.similarities("Anything?", ["Only one."])) is None


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
    from chat.providers.offline import evidence, extract

    monkeypatch.setattr(extract, "translated", lambda asked, found: set())
    monkeypatch.setattr(evidence, "translated", lambda asked, found: set())
    monkeypatch.setattr(extract, "dense_nearest", lambda scores: None)
    assert choose(question, passages, lang="en", owner="Bas Mulder") == []


def test_how_long_is_answered_by_a_duration_and_what_it_costs_by_an_amount():
    passages = [Passage("Project: Zaal Noord", "Result",
                        "During the renovation the hall lost 300 of its 1,200 seats. The renovation of the hall took "
                        "11 weeks. The new desk cost 85,000 euro.", 0)]
    # both sentences hold a number and the question's words; only one holds a duration
    quote = choose("How long did the hall's renovation take?", passages, lang="en", owner="Lot Brouwer")
    assert [q.sentences for q in quote] == [["The renovation of the hall took 11 weeks."]]
    quote = choose("What did the new desk cost?", passages, lang="en", owner="Lot Brouwer")
    assert [q.sentences for q in quote] == [["The new desk cost 85,000 euro."]]


def test_a_name_with_the_topic_asked_about_is_an_answer():
    passages = [Passage("Skills", "Software",
                        "For ticketing she relies on Zendesk; she has held the Zendesk Administrator certification "
                        "since 2021. She keeps her notes in plain text.", 0)]
    quotes = choose("Is she certified in any Zendesk product?", passages, lang="en", owner="Lot Brouwer")
    assert quotes and "Zendesk Administrator certification" in quotes[0].sentences[0]
    # the name alone, without the topic or the fact asked for, is not
    assert choose("Does she like Zendesk's new logo?", passages, lang="en", owner="Lot Brouwer") == []
    # nor the name and the topic when the question asks "which X" and the sentence names no X
    degrees = [Passage("CV", "Education", "MSc in Acoustics, TU Delft, 2015.", 0)]
    assert choose("What grade did she get for her MSc?", degrees, lang="en", owner="Lot Brouwer") == []


def test_of_sentences_that_score_the_same_the_one_nearest_in_meaning_is_quoted(monkeypatch):
    from chat.providers.offline import picking

    same = [picking._Scored(2.0, True, 0, i, s, frozenset(), True, meaning)
            for i, (s, meaning) in enumerate([("First.", 0.80), ("Second.", 0.86)])]
    assert sorted(same, key=picking._best_first)[0].sentence == "Second."
    # a higher score still wins over meaning
    better = picking._Scored(2.5, True, 0, 2, "Third.", frozenset(), True, 0.10)
    assert sorted([*same, better], key=picking._best_first)[0].sentence == "Third."


def test_how_many_is_answered_by_the_number_that_counts_the_thing_asked_about():
    passages = [Passage("Teaching", "Workshops",
                        "The workshop lasts 90 minutes. Last year 64 participants took part.", 0)]
    # each holds a number and one of the question's words; the second's number counts participants
    quotes = choose("How many participants did the workshop have?", passages, lang="en", owner="Lot Brouwer")
    assert [q.sentences for q in quotes] == [["Last year 64 participants took part."]]
    # and across languages: the Dutch question's noun is translated
    quotes = choose("Hoeveel deelnemers had de workshop?", passages, lang="nl", owner="Lot Brouwer")
    assert quotes and quotes[0].sentences == ["Last year 64 participants took part."]


@pytest.mark.parametrize(("counted", "sentence", "translate", "counts"), [
    ("participants", "Afterwards 64% of participants changed how they work.", False, True),
    ("participants", "Each participant gets twelve minutes.", False, False),  # twelve counts minutes
    ("participants", "It lasts 90 minutes and one of the participants is a student.", False, False),
    ("machines", "He delivered 62 machines in five years.", False, True),
    ("deelnemers", "Last year 64 participants took part.", True, True),
    ("deelnemers", "Last year 64 participants took part.", False, False),  # no translation within a language
    ("", "Last year 64 participants took part.", False, False),
])
def test_a_number_counts_the_noun_that_follows_it(counted, sentence, translate, counts):
    from chat.providers.offline.evidence import _counts

    assert _counts(counted, sentence, translate=translate) is counts


def test_a_question_that_pins_down_an_amount_or_a_year_is_declined_without_it():
    passages = [Passage("Project: Zaal Noord", "Result",
                        "Zaal Noord reopened with a new sound desk. Lot led a team of four for the client.", 0)]
    # the project's words are there, its cost is not
    assert choose("What did the Zaal Noord project cost the client?", passages, lang="en", owner="Lot Brouwer") == []
    assert choose("Hoeveel weegt de nieuwe geluidstafel?", passages, lang="nl", owner="Lot Brouwer") == []
    rates = [Passage("Rates", "", "A keynote costs 1,500 euro. A workshop day costs 1,800 euro.", 0, on_topic=True)]
    assert choose("What does a keynote cost?", rates, lang="en", owner="Lot Brouwer")
    # the rates say nothing of 2029: not even the availability pages' fallback quotes them
    assert choose("What will a keynote cost in 2029?", rates, lang="en", owner="Lot Brouwer") == []


@pytest.mark.parametrize(("question", "text", "on_topic", "expected"), [
    # a cost asked alongside a date is still answered by the amount
    ("What will a keynote cost next year?", "She is fully booked until June. A keynote costs 1,500 euro.", True,
     ["A keynote costs 1,500 euro."]),
    ("What does a keynote cost?", "Travel is extra. A keynote costs 1,500 euros.", True,
     ["A keynote costs 1,500 euros."]),
    # "how long" may ask a length; a start year answers how long something has gone on
    ("How long is the footbridge?", "The new footbridge is 120 metres long. It opened in May.", False,
     ["The new footbridge is 120 metres long."]),
    ("How long has she lived in Delft?", "Lot moved to Delft in 2015. She likes the canals.", False,
     ["Lot moved to Delft in 2015."]),
    # a year inside a range is named by it
    ("What did she do at Acme in 2020?", "At Acme (2019–2021) she built the sound system for the main hall.", False,
     ["At Acme (2019–2021) she built the sound system for the main hall."]),
])
def test_what_a_question_pins_down_is_read_in_its_usual_spellings(question, text, on_topic, expected):
    quotes = choose(question, [Passage("Doc", "Section", text, 0, on_topic)], lang="en", owner="Lot Brouwer")
    assert [s for q in quotes for s in q.sentences] == expected


@pytest.mark.parametrize(("question", "measure"), [
    ("How much does she charge per day?", "money"), ("How much are her fees?", "money"),
    ("Hoeveel kosten de workshops?", "money"), ("Wat rekent hij per uur?", "money"),
    ("How long did the move take?", "duration"), ("Hoe zwaar is de kast?", "weight"),
    # paying and earning are money too
    ("What did the museum pay for the new signs?", "money"), ("How much does she earn?", "money"),
    ("Hoeveel verdient hij bij de gemeente?", "money"), ("Wat betaalde de bakkerij voor de oven?", "money"),
    ("How much was she paid for the mural?", "money"), ("Hoeveel verdien je per jaar?", "money"),
    ("What did she pay attention to in the redesign?", None), ("Wat verdient de voorkeur: Python of Go?", None),
    # not a price, not a distance
    ("How much is the success rate?", None), ("How much did the error rate drop?", None),
    ("Wat vraagt de klant meestal?", None), ("How far along is the project?", None),
])
def test_what_a_question_measures(question, measure):
    from chat.providers.offline.question import question_measure

    assert question_measure(question) == measure


def test_a_year_is_read_where_the_question_asks_about_one_and_ranges_name_their_years():
    from chat.providers.offline.evidence import _ASKED_YEAR, _years

    assert _ASKED_YEAR.findall("What will her rate be in 2028?") == ["2028"]
    assert _ASKED_YEAR.findall("Does a keynote cost less than 2000 euro?") == []
    assert {"2019", "2020", "2021"} <= _years("Acme (2019-2021)")
    assert "2020" not in _years("Acme 2019, Beta 2021")


def test_a_word_that_names_nothing_is_not_translated(monkeypatch):
    # "go" and "used" say how, not what: a Dutch sentence that "translates" them is no answer
    from chat.providers.offline import extract

    asked_words: list[list[str]] = []

    def record(asked, found):
        asked_words.append(list(asked))
        return set()

    monkeypatch.setattr(extract, "translated", record)
    passages = [Passage("Artikel", "", "Een gebruikte processor kost rond de 1.500 euro. Laat operators meekijken.", 0)]
    choose("What does a used processor go for nowadays?", passages, lang="en", owner="Bas Mulder")
    assert asked_words and all("go" not in words and "used" not in words for words in asked_words)
    assert any("processor" in words for words in asked_words)


def test_having_something_done_or_just_doing_it_names_nothing():
    # "laten ... doen" (having it done), "gewoon" and "simply" (just) and "weer" (again) frame a
    # question: the thing it names is what it asks about
    passages = [Passage("Tools", "", "Her reports are written by hand in LaTeX and never generated by a "
                        "language model. She keeps the sources in Git.", 0),
                Passage("Artikel", "", "Vertalingen door een machine lezen vlot maar missen vaktermen. Ze laat elke "
                        "tekst nalezen door een vakvertaler.", 1)]
    quotes = choose("Kan ze haar rapporten niet gewoon door een taalmodel laten schrijven?", passages, lang="nl",
                    owner="Bas Mulder")
    assert any("never generated by a language model" in s for q in quotes for s in q.sentences)
    quotes = choose("Could she simply let a machine translate it again?", passages, lang="en", owner="Bas Mulder")
    assert quotes[0].sentences == ["Vertalingen door een machine lezen vlot maar missen vaktermen."]
    # ("laat" itself is also "late": it stays a word of the question)
    asks = _read_question("Liet hij de vertaling weer gewoon simpelweg door een machine doen?", passages, "Bas Mulder")
    assert not {"liet", "weer", "gewoon", "simpelweg"} & (asks.focus | asks.triggers)


def test_what_someone_earns_or_paid_is_not_answered_by_another_number():
    # the page gives days and loaves, no amount: the salary and the price are declined
    page = [Passage("Project: Bakery", "", "From March he works two days a week for the bakery. The line bakes "
                    "9,000 loaves an hour.", 0)]
    assert choose("What did the bakery pay for the new line?", page, lang="en", owner="Lot Brouwer") == []
    assert choose("Hoeveel verdient hij bij de bakkerij?", page, lang="nl", owner="Lot Brouwer") == []

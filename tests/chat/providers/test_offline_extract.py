"""Which sentence answers: the offline twin's extraction on a small invented knowledge base (an
owner called Sam Visser), so the rules are tested apart from the sample's wording."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chat.providers.offline.evidence import _past_only
from chat.providers.offline.extract import choose
from chat.providers.offline.passage import Passage
from chat.providers.offline.question import question_kind
from text.sentences import split_sentences

OWNER = "Sam Visser"
CV = [
    ("Curriculum Vitae", "", "Sam Visser is a data engineer. This CV lists his jobs, schooling and awards."),
    ("Curriculum Vitae", "Current job: Lead Engineer at Brightwater (2021 – present)",
     "Since May 2021 Sam has worked at Brightwater, a water utility in Leiden. He leads a team of nine engineers "
     "and rebuilt the billing pipeline."),
    ("Curriculum Vitae", "Schooling",
     "Sam holds an MSc in Physics from Leiden University (2014) and a BSc from the University of Groningen "
     "(2012)."),
    ("Curriculum Vitae", "Awards", "He won the Dutch Open Data Award in 2019 for a flood-map tool."),
    ("Over Sam", "Opleiding", "Hij studeerde natuurkunde aan de Universiteit Leiden (master, 2014) en in "
     "Groningen (bachelor, 2012)."),
    ("About Sam", "", "Sam Visser builds data pipelines for utilities. He lives in Haarlem with two dogs."),
    ("About Sam", "Hobbies", "He sails on the Kaag lakes most weekends and restores old radios."),
    ("Talks", "", "He spoke at PyData Eindhoven in 2022 about flood forecasting. Nobody asked about radios."),
]


def passages(*indexes: int) -> list[Passage]:
    chosen = indexes or tuple(range(len(CV)))
    return [Passage(title=CV[i][0], heading=CV[i][1], text=CV[i][2], rank=rank) for rank, i in enumerate(chosen)]


def answer(question: str, lang: str = "en", **kwargs) -> list[str]:
    found = choose(question, kwargs.pop("found", None) or passages(), lang=lang, owner=OWNER,
                   subjects=kwargs.pop("subjects", frozenset()))
    return [f"{q.title}: {' '.join(q.sentences)}" for q in found]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # where: a place or an institution; the opening sentence ("This CV lists ...") is no answer
        ("Where did he study?", "Curriculum Vitae: Sam holds an MSc in Physics from Leiden University"),
        ("Where does Sam live?", "About Sam: He lives in Haarlem with two dogs."),
        ("Where does he work now?", "Curriculum Vitae: Since May 2021 Sam has worked at Brightwater"),
        # when: a date
        ("When did he win an award?", "Curriculum Vitae: He won the Dutch Open Data Award in 2019"),
        ("In which year did he give a talk at PyData?", "Talks: He spoke at PyData Eindhoven in 2022"),
        # how many: a number
        ("How big is the team he leads?", "Curriculum Vitae: He leads a team of nine engineers"),
        # a topic in other words: "pets" finds "dogs", "free time" finds "weekends"
        ("Does he have pets?", "About Sam: He lives in Haarlem with two dogs."),
        ("What does he do in his spare time?", "About Sam: He sails on the Kaag lakes most weekends"),
        # what is it: the opening sentence is the answer
        ("Who is Sam Visser?", "Curriculum Vitae: Sam Visser is a data engineer."),
        ("What is the flood-map tool?", "Curriculum Vitae: He won the Dutch Open Data Award in 2019"),
    ],
)
def test_the_sentence_that_answers_the_kind_of_question(question, expected):
    found = answer(question)
    assert found and found[0].startswith(expected), found


def test_the_visitors_language_wins_when_the_knowledge_base_has_the_fact_in_both():
    dutch = answer("Waar heeft hij gestudeerd?", lang="nl")
    assert dutch == ["Over Sam: Hij studeerde natuurkunde aan de Universiteit Leiden (master, 2014) en in "
                     "Groningen (bachelor, 2012)."]
    english = answer("Where did he study?")
    assert len(english) == 1 and english[0].startswith("Curriculum Vitae: Sam holds an MSc")  # not twice


def test_a_second_sentence_only_when_it_adds_what_was_asked():
    found = answer("Where does he live and what are his hobbies?")
    assert found == ["About Sam: He lives in Haarlem with two dogs.",
                     "About Sam: He sails on the Kaag lakes most weekends and restores old radios."]
    assert len(answer("Where does Sam live?")) == 1


def test_no_answer_when_nothing_retrieved_shares_the_question():
    assert answer("Does he play the violin?") == []
    assert choose("Where does he live?", [], lang="en", owner=OWNER) == []


def test_a_passage_in_the_other_language_needs_a_name_and_the_kind_of_fact():
    english = passages(2)  # the search found it for a Dutch question
    # "Leiden" and a year: the name and the kind of fact asked for ("wanneer": a date) tie them
    assert answer("Wanneer studeerde hij af in Leiden?", lang="nl", found=english) == [
        "Curriculum Vitae: Sam holds an MSc in Physics from Leiden University (2014) and a BSc from the University "
        "of Groningen (2012)."]
    # nothing ties "bezigheden" to the English text: no answer rather than a guess
    assert answer("Wat zijn zijn bezigheden?", lang="nl", found=passages(6)) == []


@pytest.mark.parametrize(
    ("question", "kind"),
    [("When did she start?", "when"), ("Vanaf wanneer is ze beschikbaar?", "when"), ("Can she start next month?",
                                                                                    "when"),
     ("How many stars?", "quantity"), ("Hoeveel kost het?", "quantity"), ("How accurate is it?", "quantity"),
     ("Where does he live?", "where"), ("Waar woont hij?", "where"), ("Waar spreekt ze over?", None),
     ("Waar werkt ze mee?", None), ("Why Postgres?", "why"), ("Which companies did she work for?", "who"),
     ("Does he sail?", None)],
)
def test_question_kinds_in_both_languages(question, kind):
    assert question_kind(question) == kind


def test_sentences_split_at_sentence_ends_only():
    assert split_sentences("Jobs are rows; workers use SELECT ... FOR UPDATE. It is fast, e.g. 8,000 jobs/s. "
                           "The p95 went from 1.8 s to 240 ms!\n- A list item\n- Another") == [
        "Jobs are rows; workers use SELECT ... FOR UPDATE.", "It is fast, e.g. 8,000 jobs/s.",
        "The p95 went from 1.8 s to 240 ms!", "A list item", "Another"]


def test_a_table_row_is_read_with_its_column_headers():
    text = ("Prices exclude VAT.\n\n| Kind of work | Rate | Condition |\n|---|---|---|\n"
            "| Remote work | 90 euro per hour | no minimum |\n| On site | 800 euro per day | at least 2 days |")
    assert split_sentences(text) == [
        "Prices exclude VAT.",
        "Kind of work: Remote work; Rate: 90 euro per hour; Condition: no minimum",
        "Kind of work: On site; Rate: 800 euro per day; Condition: at least 2 days",
    ]
    found = [Passage("Rates", "Prices", text, 0)]
    assert "800 euro per day" in answer("What is the rate for work on site?", found=found)[0]


def test_a_list_item_that_opens_a_passage_loses_its_marker():
    assert split_sentences("- Dutch: native\n- English: fluent") == ["Dutch: native", "English: fluent"]


def test_a_question_for_the_things_a_heading_names_gets_the_whole_list():
    found = [Passage("CV", "CV > Talen", "- Nederlands: moedertaal\n- Engels: vloeiend\n- Duits: goed", 0)]
    assert answer("Welke talen spreekt hij?", "nl", found=found) == [
        "CV: Nederlands: moedertaal Engels: vloeiend Duits: goed"]


def test_dutch_question_words_are_not_what_a_question_is_about():
    found = [Passage("CV", "Werk", "Geeft leiding aan een team van vijf programmeurs bij een zuivelfabriek.", 0)]
    assert answer("Hoeveel programmeurs stuurt hij aan bij die kaasfabrikant?", "nl", found=found)


def test_the_kind_asked_first_wins():
    assert question_kind("How many machines did he ship when he worked in Hengelo?") == "quantity"
    assert question_kind("Sinds welk jaar heeft hij dat certificaat?") == "when"


def test_a_year_or_a_model_number_is_not_a_count():
    found = [Passage("Article", "", "Parts for the S5 have been scarce since 2015. He has replaced 23 S5 "
                                    "installations so far.", 0)]
    assert answer("How many S5 installations has he replaced?", found=found) == [
        "Article: He has replaced 23 S5 installations so far."]


def test_a_number_near_a_name_elsewhere_in_the_passage_is_not_about_it():
    found = [Passage("CV", "Clients", "- Dairy Co: main client, about 60 percent of the hours\n"
                                      "- Water Board Oost: telemetry for pumping stations", 0)]
    assert answer("How many stations does Water Board Oost have?", found=found) == [
        "CV: Water Board Oost: telemetry for pumping stations"]


def test_availability_pages_do_not_answer_what_they_do_not_name():
    page = [Passage("Availability", "", "Booked until February 2027. From 1 March 2027 three days a week.", 0,
                    on_topic=True),
            Passage("Availability", "Rates", "| Kind | Rate |\n|---|---|\n| Remote | 90 euro per hour |", 1,
                    on_topic=True)]
    assert answer("How much does he earn per year?", found=page) == []
    assert answer("Will his rate rise next year?", found=page) == []
    assert answer("When could he start?", found=page)


def test_again_asks_nothing_of_its_own():
    # "weer" and "again" only place the question in time: the Dutch question is answered like the
    # English one, from the page's dates (it named nothing the page must hold)
    page = [Passage("Availability", "", "Booked until February 2027. From 1 March 2027 three days a week.", 0,
                    on_topic=True)]
    english = answer("When is he available again?", found=page)
    assert english and answer("Wanneer is hij weer beschikbaar?", found=page) == english
    assert answer("Wanneer kan hij opnieuw beginnen?", found=page) == english


def test_a_time_phrase_alone_asks_about_nothing():
    # "right now" is not a word to find, but neither is the question about the owner in general
    assert answer("Is he around right now?") == []
    assert answer("Wat deed hij hiervoor?", lang="nl") == []  # before what, it does not say
    assert answer("Where does he work right now?") == [
        "Curriculum Vitae: Since May 2021 Sam has worked at Brightwater, a water utility in Leiden."]


def test_the_dutch_frame_of_a_question_asks_nothing_of_its_own():
    # "lately", "get" and "a few examples" frame the question; the courses and clients are asked
    found = [Passage("CV", "Certificates", "Siemens Certified Programmer TIA Portal (2016)", 0),
             Passage("CV", "Clients", "Sinds 2019 werkt hij voor klanten als Tjoelker Zuivel en Waterschap Oost.", 1)]
    assert answer("Heeft hij de laatste tijd nog certificeringen gehaald?", found=found) == [
        "CV: Siemens Certified Programmer TIA Portal (2016)"]
    assert answer("Kun je een paar voorbeelden noemen van klanten van hem?", found=found) == [
        "CV: Sinds 2019 werkt hij voor klanten als Tjoelker Zuivel en Waterschap Oost."]


def test_availability_pages_do_not_price_another_documents_subject():
    # "Kestrel" is a project of the knowledge base: what it cost is not the owner's rate
    rates = [Passage("Rates", "", "A keynote costs 1,500 euro. Remote work is 90 euro per hour.", 0, on_topic=True)]
    subjects = frozenset({"project", "kestrel", "article", "dashboards"})
    assert answer("What did the Kestrel project cost?", found=rates, subjects=subjects) == []
    assert answer("What did the Kestrel project cost?", found=rates) == ["Rates: A keynote costs 1,500 euro."]
    # a subject word written in lower case, or a name no document has, is no subject
    assert answer("What does a keynote about dashboards cost?", found=rates, subjects=subjects)
    assert answer("What does a keynote in Lisbon cost?", found=rates, subjects=subjects)


def test_a_capital_at_the_start_of_a_sentence_names_nothing():
    # "Reductions" opens the question's second sentence: no name (here: of a document's subject,
    # "Reductions for Schools") that the rates page must hold
    rates = [Passage("Rates", "", "Charities get a discount of half the listed fee.", 0, on_topic=True)]
    assert answer("We are a charity. Reductions for charities?", found=rates, subjects=frozenset(
        {"reductions", "schools"})) == ["Rates: Charities get a discount of half the listed fee."]


def test_which_x_of_a_broad_topic_wants_a_sentence_that_names_an_x():
    # sport and volunteering share a topic (spare time); "which sport" is not answered by the
    # volunteering, but "which city" by a place, the kind of fact it asks for
    spare = [Passage("About Sam", "Outside work", "On Saturdays he volunteers at the food bank in Haarlem. "
                                                  "He plays korfball in a sport club.", 0)]
    assert answer("Which sport does he do?", found=spare) == ["About Sam: He plays korfball in a sport club."]
    volunteering = [Passage("About Sam", "Outside work", "On Saturdays he volunteers at the food bank.", 0)]
    assert answer("Which sport does he do?", found=volunteering) == []
    # "what can ...", "what about ...": no X asked for
    assert answer("What about his spare time?", found=volunteering) == [
        "About Sam: On Saturdays he volunteers at the food bank."]
    assert answer("In which city does he volunteer?", found=spare) == [
        "About Sam: On Saturdays he volunteers at the food bank in Haarlem."]


def test_two_sentences_that_score_alike_are_both_quoted():
    # the twin cannot tell which of two equally good sentences answers: it quotes both, cited
    found = [Passage("CV", "Teaching", "He teaches typography at Leiden University.", 0),
             Passage("About Sam", "Teaching", "He teaches typography at the art academy in Eindhoven.", 0)]
    assert sorted(answer("Where does he teach typography?", found=found)) == [
        "About Sam: He teaches typography at the art academy in Eindhoven.",
        "CV: He teaches typography at Leiden University."]
    # one that scores clearly better stands alone, though the other speaks of it too
    found[1] = Passage("About Sam", "Teaching", "He teaches in Eindhoven now and then.", 0)
    assert answer("Where does he teach typography?", found=found) == [
        "CV: He teaches typography at Leiden University."]


def test_a_question_asked_of_now_prefers_what_holds_now_to_what_is_dated_in_the_past():
    found = [Passage("CV", "Summary", "MSc Hydrology, Delta University, 2013", 0),
             Passage("CV", "Summary", "Day job: data lead, Polder University", 1)]
    assert answer("Which university does he work for?", found=found) == ["CV: Day job: data lead, Polder University"]
    # asked of the past, the dated line answers; "since" a year is not the past
    assert answer("Which university did he go to?", found=found) == ["CV: MSc Hydrology, Delta University, 2013"]
    found[1] = Passage("CV", "Summary", "Data lead at Polder University since 2012", 1)
    assert answer("Which university does he work for?", found=found) == [
        "CV: Data lead at Polder University since 2012"]



@pytest.mark.parametrize(("sentence", "past"), [
    ("MSc Hydrology, Delta University, 2013", True), ("Data lead at Polder University until 2019", True),
    ("From 2015 to 2019 she taught at Delta University", True), ("Van 2015 tot 2019 gaf ze les", True),
    ("Data lead at Polder University since 2012", False), ("Vanaf maart 2020 werkt ze bij Polder", False),
    ("From 2019 she has led the data team", False), ("2021 - present: data lead", False),
    ("Data lead at Polder University", False),
])
def test_a_sentence_is_dated_in_the_past_only_when_what_it_dates_has_ended(sentence, past):
    assert _past_only(sentence) is past


# a Dutch CV's list of languages, and a line of its assignments abroad
TALEN = Passage("Cv", "Talen", "- Nederlands: moedertaal\n- Engels: vloeiend\n- Spaans: goed; werkt vaak voor "
                               "Spaanse klanten\n- Pools: een beetje", 0)
BUITENLAND = Passage("Cv", "Werkervaring", "Sam bouwde sluizen in Gent. Langste opdracht: acht maanden in "
                                           "Keulen, Duitsland.", 1)


@pytest.mark.parametrize(("question", "expected"), [
    # a language's or country's name in the other language is the same name, and speaking one
    # asks about the languages spoken, not about a talk
    ("Does he speak Spanish?", "Cv: Spaans: goed; werkt vaak voor Spaanse klanten"),
    ("does he speak polish?", "Cv: Pools: een beetje"),
    ("How long did he work in Germany?", "Cv: Langste opdracht: acht maanden in Keulen, Duitsland."),
])
def test_a_language_or_country_is_found_by_its_name_in_the_other_language(question, expected):
    assert answer(question, found=[TALEN, BUITENLAND]) == [expected]
    # without the line that names it, no other line of the list answers
    others = Passage("Cv", "Talen", "- Nederlands: moedertaal\n- Engels: vloeiend", 0)
    assert answer(question, found=[others]) == []


@pytest.mark.parametrize("question", [
    "Which languages does he speak?", "Which languages does he speak besides English?",
])
def test_the_languages_spoken_are_the_list_under_a_heading_in_the_other_language(question):
    # a programming language, named as such, does not answer
    tools = Passage("Tools", "", "The controllers, software and languages he uses on factory projects.", 1)
    assert answer(question, found=[tools, TALEN]) == [
        "Cv: Nederlands: moedertaal Engels: vloeiend Spaans: goed; werkt vaak voor Spaanse klanten "
        "Pools: een beetje"]


@pytest.mark.parametrize("question", [
    "Does he polish his talks?",  # "polish", not "Polish"
    "Has he spoken at German conferences?",  # a talk, not a language spoken
])
def test_a_word_that_only_looks_like_a_language_s_name_finds_no_language(question):
    assert answer(question, found=[TALEN]) == []


@pytest.mark.parametrize("heading", ["Programmeertalen", "Programming languages"])
def test_a_heading_of_programming_languages_does_not_list_the_languages_spoken(heading):
    # a kind of language (a compound of "talen"), or "languages" named by the question's own word
    code = Passage("Tools", heading, "- Structured Text\n- Python\n- C#", 0)
    assert answer("Which languages does he speak?", found=[code, replace(TALEN, rank=1)]) == [
        "Cv: Nederlands: moedertaal Engels: vloeiend Spaans: goed; werkt vaak voor Spaanse klanten "
        "Pools: een beetje"]


@pytest.mark.parametrize(("question", "lang"), [
    ("Does he speak Russian with other clients?", "en"), ("Spreekt hij Russisch buiten zijn werk?", "nl"),
])
def test_a_language_asked_about_beside_other_words_is_still_the_one_asked(question, lang):
    # "other" and "buiten" leave out the name they precede ("besides English"), nothing else
    assert answer(question, lang, found=[TALEN]) == []


def test_a_heading_that_holds_the_question_s_words_links_its_sentences():
    # "What programming languages ...?" and the section "Programming languages": its lines say
    # nothing of programming or languages themselves
    code = Passage("Tools", "Programming languages", "Structured Text on every PLC. Python for the camera "
                                                     "systems.", 0)
    assert answer("What programming languages does he use?", found=[code]) == [
        "Tools: Structured Text on every PLC. Python for the camera systems."]

"""knowledge.claims: a cited sentence is checked against its cited document's own text, in either
language, without a model call. The document is the test's own, not an owner's."""

from __future__ import annotations

import pytest

from knowledge import claims
from knowledge.embedders import E5Embedder
from text.numbers import quantities

DOC = (
    "Since April 2021 Ilse Voskuil has run the data team at Kantara Logistics in Zwolle. The team of five "
    "engineers rebuilt the route planner, which now plans 3,200 deliveries a day instead of 1,900. Drivers see "
    "their routes the evening before. Dispatchers change a route with one drag.\n\n"
    "## Earlier work\nShe studied econometrics. After her degree she worked for four years at Dunmore Analytics "
    "in Leeds, where she built pricing models.\n\n"
    "## Availability\nShe is not looking for a permanent position. Her day rate is 950 euro excluding VAT, and "
    "she works two days a week at most for new clients."
)
TITLE = "Curriculum vitae Ilse Voskuil"
OWNER = "Ilse Voskuil"


def judged(sentence: str, e5, title: str = TITLE, body: str = DOC, owner: str = OWNER) -> list[claims.Unsupported]:
    """``sentence`` citing the one document ``title``, checked."""
    return claims.check(f"{sentence} [source: {title}]", {title: claims.Source(title, body)}, e5, owner)


def check(sentence: str, e5) -> list[claims.Unsupported]:
    return judged(sentence, e5)


@pytest.mark.parametrize("sentence", [
    "Her team's route planner handles 3200 deliveries every day, up from 1900.",
    "She leads the data team at Kantara Logistics, based in Zwolle, since April 2021.",
    "Ilse spent four years at Dunmore Analytics in Leeds building pricing models.",
    "Sinds april 2021 leidt ze het datateam van Kantara Logistics in Zwolle.",  # Dutch claim, English source
    "Haar dagtarief is 950 euro exclusief btw.",
    "She works at most two days a week for a new client.",
    "She is one of five engineers who rebuilt the route planner.",  # "one of" states no number
])
def test_what_the_document_says_passes_in_other_words_and_the_other_language(sentence, e5):
    assert check(sentence, e5) == []


@pytest.mark.parametrize(("sentence", "reason"), [
    ("Her team's route planner handles 4,200 deliveries every day.", "number"),
    ("She leads the data team at Kantara Logistics since April 2019.", "number"),
    ("She leads the data team at Kantara Logistics and won the Logistics Data Award.", "name"),
    ("Drivers in Leeds see their routes the evening before.", "combination"),
    ("She is looking for a permanent position.", "negation"),
    ("She grows tomatoes on her balcony.", "meaning"),
    # a sentence of the document, word for word, and more: the more is judged
    ("Since April 2021 Ilse Voskuil has run the data team at Kantara Logistics in Zwolle and won the Data Prize.",
     "name"),
])
def test_a_changed_number_an_invented_name_a_wrong_pair_and_a_negation_are_caught(sentence, reason, e5):
    found = check(sentence, e5)
    assert [u.reason for u in found] == [reason], found
    assert found[0].title == TITLE and found[0].sentence == sentence


def test_a_claim_is_supported_when_one_of_its_cited_documents_says_it(e5):
    other = "About Ilse"
    sources = {TITLE: claims.Source(TITLE, DOC), other: claims.Source(other, "Ilse grew up in Deventer.")}
    answer = f"Ilse grew up in Deventer. [source: {TITLE}] [source: {other}]"
    assert claims.check(answer, sources, e5, OWNER) == []
    assert [u.reason for u in claims.check(f"Ilse grew up in Deventer. [source: {TITLE}]", sources, e5, OWNER)] \
        == ["name"]


def test_mark_strip_and_log_change_only_the_unsupported_sentences(e5):
    answer = (f"She runs the data team at Kantara Logistics. [source: {TITLE}] "
              f"The planner handles 9,999 deliveries a day. [source: {TITLE}]")
    found = claims.check(answer, {TITLE: claims.Source(TITLE, DOC)}, e5, OWNER)
    assert [u.reason for u in found] == ["number"]
    marked = claims.applied(answer, found, "mark", "(not in the cited source)")
    assert marked == (f"She runs the data team at Kantara Logistics. [source: {TITLE}] "
                      "The planner handles 9,999 deliveries a day (not in the cited source).")
    stripped = claims.applied(answer, found, "strip", "")
    assert stripped == f"She runs the data team at Kantara Logistics. [source: {TITLE}]"
    assert claims.applied(answer, found, "log", "") == answer


@pytest.mark.parametrize(("sentence", "kind", "certain"), [
    ("Her team's route planner handles 4,200 deliveries every day.", "figure", True),
    ("She leads the data team at Kantara Logistics and won the Logistics Data Award.", "name", False),
    ("She is looking for a permanent position.", "negation-dropped", False),
    ("She grows tomatoes on her balcony.", "novel", False),
])
def test_a_figure_the_document_lacks_is_certain_and_the_rest_is_doubt(sentence, kind, certain, e5):
    [found] = check(sentence, e5)
    assert (found.kind, found.certain) == (kind, certain)
    assert found.as_event()["certain"] is certain and found.as_event()["kind"] == kind


def test_a_figure_is_changed_when_the_document_counts_the_same_thing_otherwise():
    assert claims.changed_figure("a team of nine engineers", "The team of six engineers.")
    assert claims.changed_figure("she paid 70 euro", "The course costs €80.")
    assert claims.changed_figure("since 2019", "She has worked there since 2021.")
    assert not claims.changed_figure("she keeps nine cats", "The team of six engineers.")
    assert not claims.changed_figure("een team van negen ontwikkelaars", "The team of six engineers.")


def test_a_figure_in_the_other_language_the_document_does_not_count_is_a_doubt(e5):
    [found] = check("Ze heeft drie katten.", e5)
    assert (found.kind, found.certain, found.reason) == ("new-figure", False, "number")


def test_a_doubt_changes_nothing_the_visitor_reads(e5):
    answer = (f"She is looking for a permanent position. [source: {TITLE}] "
              f"The planner handles 9,999 deliveries a day. [source: {TITLE}]")
    found = claims.check(answer, {TITLE: claims.Source(TITLE, DOC)}, e5, OWNER)
    assert [(u.reason, u.certain) for u in found] == [("negation", False), ("number", True)]
    assert claims.applied(answer, found, "mark", "(not in the cited source)") == (
        f"She is looking for a permanent position. [source: {TITLE}] "
        "The planner handles 9,999 deliveries a day (not in the cited source).")
    assert claims.applied(answer, found[:1], "strip", "") == answer


def test_a_sentence_another_document_says_is_a_doubt_when_its_finding_is(e5):
    other = "About Ilse"
    sources = {TITLE: claims.Source(TITLE, DOC), other: claims.Source(other, "Ilse grew up in Deventer.")}
    [found] = claims.check(f"Ilse grew up in Deventer. [source: {TITLE}]", sources, e5, OWNER)
    assert (found.kind, found.certain, found.reason) == ("elsewhere", False, "name")
    assert found.detail.startswith(f"said in {other}")


def test_the_title_is_no_evidence(e5):
    """A taught answer's title is the visitor's question: its names and figures back nothing."""
    title = "Does she speak Icelandic and charge 80 euro?"
    source = claims.Source(title, "She answers in Dutch or English.")
    found = claims.check(f"She speaks Icelandic for 80 euro an hour. [source: {title}]", {title: source}, e5, OWNER)
    assert [u.reason for u in found] == ["number"] and found[0].certain


def test_at_most_so_many_sentences_of_an_answer_are_checked(e5, monkeypatch):
    monkeypatch.setattr(claims, "MOST_CLAIMS", 2)
    answer = " ".join(f"The planner handles {n} deliveries a day. [source: {TITLE}]" for n in (9001, 9002, 9003))
    found = claims.check(answer, {TITLE: claims.Source(TITLE, DOC)}, e5, OWNER)
    assert [u.detail for u in found] == ["9001", "9002"]


def test_quantities_compare_as_values_in_both_languages():
    assert quantities("1,100 euro").values == quantities("1.100 euro").values == quantities("1100 EUR").values
    assert quantities("two days").values == quantities("twee dagen").values == quantities("2 days").values
    assert quantities("March 2022").months == quantities("maart 2022").months == {3}
    assert quantities("2,5 uur").values == quantities("2.5 hours").values == {2.5}
    assert quantities("she may come, p95 and S5").values == frozenset() and not quantities("she may come").months
    assert quantities("Python 3.12 from 2019-2022").values == {3.12, 2019.0, 2022.0}


def test_marking_changes_the_sentence_and_nothing_else_of_the_answer(e5):
    code = "```\nfor route in plan:\n    send(route)\n```"
    answer = (f"The planner handles 9,999 deliveries a day. [source: {TITLE}]\n\n{code}\n\n"
              f"- Drivers see their routes the evening before.\n    - Dispatchers change a route with one drag.")
    found = claims.check(answer, {TITLE: claims.Source(TITLE, DOC)}, e5, OWNER)
    marked = claims.applied(answer, found, "mark", "(not in the cited source)")
    assert marked.startswith("The planner handles 9,999 deliveries a day (not in the cited source).")
    assert code in marked and "\n    - Dispatchers change a route" in marked  # indentation kept


DUTCH_DOC = (
    "## Opleiding\nJoost Brinkman studeerde Technische Informatica aan de TU Eindhoven (master, 2016) en "
    "Bedrijfskunde aan de Hogeschool Rotterdam.\n\n"
    "## Werk\nHij werkt op maandag en dinsdag voor de gemeente Breda. Daar bouwt hij de systemen voor "
    "vergunningen. Zijn team telt zes mensen. Ze werken met Python en PostgreSQL.\n\n"
    "## Lesgeven\nOp woensdagmiddag geeft hij les aan de Universiteit Tilburg.\n\n"
    "## Tarief\nZijn dagtarief is 800 euro exclusief btw."
)
DUTCH_TITLE = "Over Joost"


def check_dutch(sentence: str, e5) -> list[claims.Unsupported]:
    return judged(sentence, e5, DUTCH_TITLE, DUTCH_DOC, "Joost Brinkman")


@pytest.mark.parametrize("sentence", [
    "He studied Computer Science at Eindhoven University of Technology, finishing his master's in 2016.",
    "He studied Business Administration at the Rotterdam University of Applied Sciences.",
    "He works for the Municipality of Breda on Mondays and Tuesdays.",
    "On Wednesday afternoons he teaches at Tilburg University.",  # "woensdagmiddag": the day opens a compound
    "His day rate is 800 euros excluding VAT.",
])
def test_a_name_translated_with_its_institution_field_or_day_is_the_documents(sentence, e5):
    assert check_dutch(sentence, e5) == []


@pytest.mark.parametrize(("sentence", "reason"), [
    ("He studied Physics at Eindhoven University of Technology.", "name"),  # the field is not the document's
    ("He studied Computer Science at Delft University of Technology.", "name"),  # its own part must be there
    ("He works for the Municipality of Breda on Fridays.", "name"),
    ("He studied Business Administration at Tilburg University and at Harvard.", "name"),
    # "TU" counts for "University of Technology" only beside the claim's own name: "TU Eindhoven"
    ("He studied Computer Science at Tilburg University of Technology.", "name"),
])
def test_a_translated_institution_keeps_its_own_name_and_a_wrong_field_or_day_is_caught(sentence, reason, e5):
    found = check_dutch(sentence, e5)
    assert [u.reason for u in found] == [reason], found


STUDY = (
    "Ilse Voskuil on the warehouse study.\n\n"
    "## What changed\nIn 2022 the team measured picking errors. Only 4% of orders had one. Before the new "
    "scanners, errors were 11%.\n\n"
    "The warehouse floor was 24 degrees in summer and 19 in winter.\n\n"
    "## What she does not take on\n- Work for the gambling industry.\n- Frontend development.\n\n"
    "The planner never changes a route on its own.\n\n"
    "| Format | Length | Fee |\n|---|---|---|\n| Online talk | 45 minutes | 600 euro |\n"
    "| Workshop | half a day | 900 euro |\n\n"
    "The planner's code has about 1,900 stars on GitHub.\n\nIlse works part-time, on weekday mornings."
)
STUDY_TITLE = "Warehouse study"


def check_study(sentence: str, e5) -> list[claims.Unsupported]:
    return judged(sentence, e5, STUDY_TITLE, STUDY)


@pytest.mark.parametrize("sentence", [
    # two figures of one paragraph, each beside its own words
    "In 2022 picking errors were down to 4% of orders, from 11% before the new scanners.",
    "The planner's code has roughly 1.9k stars on GitHub.",
    "According to her CV, an online talk takes 45 minutes and costs 600 euro.",
    "She does not take on frontend development.",
    "The planner does not change a route by itself.",
    "Ilse works part-time, in the mornings on weekdays.",
])
def test_figures_joined_from_one_paragraph_a_lead_in_and_a_kept_negation_pass(sentence, e5):
    assert check_study(sentence, e5) == []


@pytest.mark.parametrize(("sentence", "reason"), [
    # the temperatures' figures, where the nearest sentence counts orders' percentages otherwise: a changed figure
    ("In 2022 picking errors fell from 24% to 19% of orders.", "number"),
    ("She gladly takes on work for the gambling industry.", "negation"),  # the heading's "not"
    ("The planner changes a route on its own when traffic is heavy.", "negation"),  # the "never" dropped
    ("Ilse works full-time, on weekday mornings.", "negation"),  # the other one of a pair
    ("Ilse werkt voltijd, op doordeweekse ochtenden.", "negation"),  # in the other language
    ("Ilse also builds greenhouses for primary schools in Utrecht.", "name"),
    ("Ilse also builds wooden greenhouses for primary schools.", "meaning"),  # words the study never writes
])
def test_a_figure_of_another_fact_a_lost_negation_and_an_invented_fact_are_caught(sentence, reason, e5):
    assert [u.reason for u in check_study(sentence, e5)] == [reason]


def test_thousands_written_with_k_and_names_inside_compounds():
    assert quantities("1.9k stars, 12K users").values == {1900.0, 12000.0}
    found = claims.check("Hij herschrijft S5-code liever. [source: T]", {"T": claims.Source("T", "S5 en S7.")},
                         E5Embedder(), OWNER)
    assert "name" not in [u.reason for u in found]


def test_opposites_are_read_in_both_languages_and_a_sentence_writing_both_is_no_opposite():
    from knowledge.claims.cited import opposed

    assert opposed("She works part-time.", "Ze werkt fulltime.") == "part-time / fulltime"
    assert opposed("Het aantal daalde.", "The number increased.") == "daalde / increased"
    assert opposed("She works part-time.", "Full-time in winter, part-time in summer.") == ""
    assert opposed("She works at Kantara.", "She works part-time.") == ""
    assert opposed("He turned the volume up by 6 dB.", "Hij zette het volume 6 dB omlaag.") == "up / omlaag"


def one(title: str, body: str, sentence: str) -> list[str]:
    return [u.reason for u in judged(sentence, E5Embedder(), title, body, "Anna de Vries")]


def test_a_lead_in_names_nothing_but_what_follows_it_is_still_read():
    body = "Anna worked at Acme in Zwolle, where she led twelve planners. Her repository has 12,000 stars."
    assert one("CV", body, "According to her CV, Anna worked at Acme in Zwolle.") == []
    assert one("CV", body, "According to her CV, Globex hired Anna in Zwolle.") == ["name"]
    # no comma after it: no lead-in, the whole sentence is the claim
    assert one("CV", body, "Volgens haar cv werkte ze bij Globex, waar ze leiding gaf aan twaalf planners.") == ["name"]
    assert one("CV", body, "Her repository has 12K stars.") == []  # thousands, not a name


def test_a_negating_list_governs_its_items_only_and_a_lead_in_by_its_last_sentence():
    body = ("She builds dashboards for web design agencies.\n\n## What I don't take on\n- Web design\n\n"
            "No time to plan? Anna helps with:\n- rosters for warehouses in Zwolle\n\n"
            "## Not sure where to start?\n- a free first call of half an hour")
    assert one("Work", body, "She builds dashboards for web design agencies.") == []  # quoted, not the item
    assert one("Work", body, "Anna helps with rosters for warehouses in Zwolle.") == []
    assert one("Work", body, "Anna offers a free first call of half an hour.") == []


def test_a_list_item_ending_in_a_word_like_an_abbreviation_stays_its_own_sentence():
    from text.sentences import split_sentences

    assert split_sentences("- She fixed their problems.\n- She lives in Zwolle.") == [
        "She fixed their problems.", "She lives in Zwolle."]
    assert split_sentences("Tools, e.g. Python. See nr. 5 here.") == ["Tools, e.g. Python.", "See nr. 5 here."]


CAREER = (
    "Before Kantara, Ilse worked at Dunmore Analytics in Leeds and began her career at Harfield Data in York. "
    "She holds an MSc in Econometrics from Tilburg University and a BSc in Mathematics from the University of "
    "Groningen. She has worked in Leeds, York and Zwolle.\n\n"
    "Een vaste baan zoekt ze niet."
)
CAREER_TITLE = "Loopbaan"


@pytest.mark.parametrize("sentence", [
    "She began her career at Harfield Data in York.",
    "Her BSc in Mathematics is from the University of Groningen.",
    "She has worked in both Leeds and York.",  # two places listed side by side bind nothing
    "Ze werkte in zowel Leeds als York.",
    "Ilse werkte in Leeds, York en Zwolle.",
])
def test_names_the_document_writes_together_pass(sentence, e5):
    assert judged(sentence, e5, CAREER_TITLE, CAREER) == []


@pytest.mark.parametrize(("sentence", "reason"), [
    # two true names of one sentence, bound to each other where the document binds each to another
    ("She began her career at Harfield Data in Leeds.", "combination"),
    ("Ilse holds an MSc in Econometrics from the University of Groningen.", "combination"),
])
def test_a_name_bound_to_the_wrong_other_name_is_caught(sentence, reason, e5):
    assert [u.reason for u in judged(sentence, e5, CAREER_TITLE, CAREER)] == [reason]


def test_a_negating_sentence_restated_with_its_words_inflected_is_caught(e5):
    # every word of "Een vaste baan zoekt ze niet" written, "zoek" for "zoekt", the "niet" dropped:
    # read from the words, however far the model places the two
    found = judged("Naast haar freelancewerk voor logistieke bedrijven zoek ze ook een vaste baan.", e5,
                   CAREER_TITLE, CAREER)
    assert [(u.reason, u.detail) for u in found] == [("negation", "the document: Een vaste baan zoekt ze niet.")]


FEES = (
    "An online talk takes 45 minutes and costs 600 euro.\n\n"
    "The reading room was rebuilt with help from two students, which brought the noise down from 60 to 45 dB "
    "without hiding the old brick walls."
)


@pytest.mark.parametrize("sentence", [
    "An online talk of 45 minutes costs 600 euro, excluding travel.",  # no travel in the fee to reverse
    "Een online talk van 45 minuten kost 600 euro exclusief reiskosten.",
    "Two students helped rebuild the reading room, bringing the noise down from 60 to 45 dB.",
])
def test_a_without_or_excluding_whose_object_the_document_does_not_write_reverses_nothing(sentence, e5):
    assert judged(sentence, e5, "Talks", FEES) == []


def test_a_without_whose_object_the_document_writes_is_a_negation(e5):
    found = judged("The reading room was rebuilt without help from students.", e5, "Talks", FEES)
    assert [u.reason for u in found] == ["negation"]


NIGHTS = ("Measurements at night or at the weekend cost the same day rate; there is no surcharge for them. "
          "Do not install antivirus software on operator panels before the machine builder has approved it. "
          "He takes no permanent job and does not work through recruitment agencies.")


@pytest.mark.parametrize("sentence", [
    "For measurements at night he charges a surcharge on top of his day rate.",
    "He advises installing antivirus software on every operator panel right away.",
    "He works through recruitment agencies for most clients.",  # what the second negation governs
])
def test_a_claim_writing_what_a_nearby_negation_governs_without_it_is_a_negation(sentence, e5):
    assert [u.reason for u in judged(sentence, e5, "Rates", NIGHTS)] == ["negation"]


def test_a_claim_near_a_negation_that_says_something_else_passes(e5):
    assert judged("Measurements at the weekend cost the same day rate.", e5, "Rates", NIGHTS) == []


SECTIONS = (
    "## Platform lead at Orvane (2021 – now)\nShe moved the billing service from Flask to Django.\n\n"
    "## Engineer at Kestrel Rail (2016 – 2021)\nShe built the capacity planner in Go and cut planning "
    "time to four minutes."
)


def test_a_heading_places_names_for_its_own_section_only(e5):
    assert judged("At Orvane she moved the billing service over from Flask to Django.", e5, "CV", SECTIONS) == []
    found = judged("At Kestrel Rail she moved the billing service over from Flask to Django.", e5, "CV", SECTIONS)
    assert [u.reason for u in found] == ["combination"]


@pytest.mark.parametrize(("sentence", "reason"), [
    # what it adds (two words or more) the document never writes, however near the rest of it is
    ("The team of five engineers also rebuilt the route planner's weather module.", "meaning"),
    ("Drivers also see their routes and the expected traffic jams the evening before.", "meaning"),
    ("Besides pricing models, she also built churn dashboards at Dunmore Analytics in Leeds.", "meaning"),
])
def test_a_claim_that_says_it_adds_something_the_document_lacks_is_caught(sentence, reason, e5):
    assert [u.reason for u in check(sentence, e5)] == [reason]


def test_a_claim_that_adds_what_the_document_says_passes(e5):
    assert check("Drivers also see their routes the evening before.", e5) == []


def test_rates_are_figures_per_period_in_each_language():
    from text.numbers import rates

    assert rates("around 40,000 bookings a month, 95 euro per uur, 2,000 visitors weekly") == {
        (40000.0, "month"), (95.0, "hour"), (2000.0, "week")}
    assert rates("Her day rate is 1,100 euro; she worked there for 3 years.") == set()  # no figure per period
    assert rates("1.100 euro per dag") == rates("1,100 euro a day") == {(1100.0, "day")}


@pytest.mark.parametrize(("sentence", "reason"), [
    ("The route planner now plans 3,200 deliveries a week.", "number"),  # the document's figure, per another period
    ("De routeplanner plant nu 3.200 leveringen per maand.", "number"),
])
def test_a_figure_given_per_another_period_is_a_changed_number(sentence, reason, e5):
    assert [u.reason for u in check(sentence, e5)] == [reason]


def test_a_figure_given_per_its_own_period_passes(e5):
    assert check("The route planner now plans 3,200 deliveries daily.", e5) == []

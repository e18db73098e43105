from __future__ import annotations

import pytest

from knowledge import topics
from text.forms import same_word
from text.words import content_words


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Where did she study?", "education"),
        ("Waar heeft ze gestudeerd?", "education"),
        ("Which university did he go to?", "education"),
        ("Where does she live?", "residence"),
        ("Waar woont hij?", "residence"),
        ("Does she have pets?", "pets"),
        ("Heeft ze huisdieren?", "pets"),
        ("What does she do in her free time?", "leisure"),
        ("Hoe vult hij zijn vrije tijd?", "leisure"),
        ("Welke talen spreekt ze?", "spoken_languages"),
        ("What are her rates?", "rates"),
        ("Where is he employed at the moment?", "employment"),
        # the Dutch ways of saying what the English words of a topic say
        ("Wat doet ze graag naast het werk?", "leisure"),
        ("Heeft hij ervaring met het aansturen van een team?", "team"),
        ("Hoe kan ik contact opnemen met haar?", "contact"),
    ],
)
def test_a_question_names_its_topic_in_either_language(text, topic):
    assert topic in topics.topics_of(text)


@pytest.mark.parametrize(
    "text",
    ["Is she free next week?", "Which programming languages does she use?", "When did she start?",
     "Does she speak?", "Heeft hij Duitse klanten?"],
)
def test_words_that_name_many_things_name_no_topic(text):
    # "free", "languages" (programming or spoken?), "start" and "speak" are left out on purpose,
    # and so is a language's name alone (German clients)
    assert topics.topics_of(text) == []
    assert topics.naming_words(text) == set()


@pytest.mark.parametrize(
    "text",
    ["Does she speak Dutch?", "Which languages does he speak?", "Spreekt ze Duits?"],
)
def test_speaking_and_a_language_name_the_languages_spoken(text):
    assert "spoken_languages" in topics.topics_of(text)
    # the language alone, or the speaking alone, does not
    assert "spoken_languages" not in topics.topics_of(text.replace("speak", "write").replace("Spreekt", "Schrijft"))
    # the words that name it, together
    assert topics.naming_words(text) & {"speak", "spreekt"} and topics.naming_words(text) - {"speak", "spreekt"}


def test_expansion_adds_the_topics_other_words_in_both_languages():
    words = topics.expansion("Where did she study?")
    assert {"education", "degree", "university", "opleiding", "universiteit"} <= set(words)
    assert "study" not in words  # the question's own word is not an expansion
    # found through a topic, though the word alone does not name it
    assert {"language", "languages"} <= set(topics.expansion("Welke talen spreekt ze?"))


def test_phrase_words_belong_to_the_phrase():
    assert topics.phrase_words("How does he fill his spare time?") == {"spare", "time"}
    # the Dutch idioms: "outside her work", "get in touch with her"
    assert topics.phrase_words("Wat doet ze naast haar werk?") == {"naast", "haar", "werk"}
    assert topics.phrase_words("Hoe kan ik contact met haar opnemen?") == {"contact", "met", "haar", "opnemen"}
    assert topics.phrase_words("How much time does a review take?") == set()


def test_content_words_drop_function_words_and_numbers():
    assert content_words("Where did she work in 2019 and what was her role?") == ["work", "role"]
    assert content_words("Waar heeft ze gewerkt?") == ["gewerkt"]
    # pointing words ask nothing of their own, in either language ("again", "weer")
    assert content_words("Wanneer kan ze opnieuw beginnen?") == ["beginnen"]
    assert content_words("When can she start again?") == ["start"]
    assert content_words("Wat deed hij hiervoor?") == []
    assert content_words("Heeft ze een master, of is ze zelfs gepromoveerd?") == ["master", "gepromoveerd"]


@pytest.mark.parametrize(
    ("a", "b"),
    [("study", "studies"), ("studied", "study"), ("lives", "living"), ("built", "build"), ("leads", "lead"),
     ("team", "platformteam"), ("tarief", "dagtarief"), ("languages", "language"), ("master's", "master"),
     ("urgentie", "urgency"), ("evaluatie", "evaluated"), ("contributors", "contributed"),
     ("develop", "developer")],
)
def test_same_word_in_another_form_or_language(a, b):
    assert same_word(a, b)


@pytest.mark.parametrize(("a", "b"), [("stars", "started"), ("rate", "accurate"), ("data", "database"),
                                      ("team", "teach"), ("cat", "catalogue"), ("station", "state")])
def test_words_that_only_look_alike_are_not_the_same(a, b):
    assert not same_word(a, b)


def test_a_dutch_compound_names_its_heads_topic():
    assert topics.topics_of("Welke avondcursus geeft ze?") == ["teaching"]
    assert topics.topics_of("Met welke programmeertalen werkt ze?") == []  # "talen" is too short a head

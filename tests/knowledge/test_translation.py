"""A visitor's word found in the knowledge base's other language, with the shipped models (no
dictionary, no network): the words the model puts nearest are the translations, and the search
looks for them in the full text. Words and pages are invented here, not taken from any owner."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from knowledge import translation
from knowledge.search import knowledge_search, query, warm_vocabulary
from knowledge.search.relevance import relevance
from knowledge.services import knowledge_sync

pytestmark = pytest.mark.django_db

DUTCH = ["Hij woont met zijn kat in Zwolle.", "De tentoonstelling trok veel bezoekers.",
         "De prijs van een haalbaarheidsstudie is 4.800 euro.",
         "In de winter knutselt hij aan oude brommers."]


def test_the_vocabulary_is_the_words_that_can_name_something():
    words = translation.vocabulary(["De kat van Jan, 3 jaar oud: 'n lieverd!"])
    assert words == ["jaar", "jan", "kat", "lieverd", "oud"]


@pytest.mark.parametrize(("asked", "expected"), [
    (["price"], ["prijs"]), (["cat"], ["kat"]), (["Cat", "price"], ["kat", "prijs"]),
    # nothing in the vocabulary says it; the word itself ("winter") or a stop word is no translation
    (["salary"], []), (["married"], []), (["winter"], []), (["the"], []), ([], []),
])
def test_a_word_finds_its_translations_in_the_vocabulary_and_nothing_else(asked, expected):
    assert sorted(translation.translations(asked, translation.vocabulary(DUTCH))) == expected


def test_only_the_words_of_the_other_language_are_translations():
    english = translation.vocabulary(["The exhibition drew many guests and visitors."])
    known = sorted({*english, *translation.vocabulary(DUTCH)})
    assert set(translation.translations(["visitors"], known)) == {"bezoekers", "guests"}  # a neighbour
    assert translation.translations(["visitors"], known, among=set(known) - set(english)) == ["bezoekers"]


def test_no_vocabulary_translates_nothing():
    assert translation.translations(["price"], []) == []


def _page(folder, name, title, lang, body):
    (folder / name).write_text(f"---\ntitle: {title}\nkind: project\nlang: {lang}\n---\n{body}\n", encoding="utf-8")


def test_the_search_finds_a_fact_in_the_other_language_by_its_translated_word(tmp_path, embedders, monkeypatch):
    _page(tmp_path, "expo.md", "Expo Zwolle", "nl",
          "Het lichtontwerp voor een expositie over de Hanzetijd. De tentoonstelling trok 40.000 bezoekers.")
    _page(tmp_path, "kaas.md", "Cheese inspection", "en", "A camera line that inspects 14,000 cheeses a day.")
    # a word in a fifth of the pages or more is too common to search for: a site of a few more
    for n, (thing, place) in enumerate([("gas ovens", "a bakery"), ("pumps", "a water board"), ("a robot", "a farm"),
                                        ("conveyors", "a brewery"), ("scales", "a dairy")]):
        _page(tmp_path, f"p{n}.md", f"Project {n}", "en", f"New controls for {thing} at {place}.")
    knowledge_sync(root=tmp_path, embedders=embedders)
    assert warm_vocabulary() > 10  # as a serving process starts

    def expo(hits):
        return next(h for h in hits if h.document_title == "Expo Zwolle")

    question = "How many visitors came to the exhibition?"
    found = expo(knowledge_search(question))
    assert found.fulltext_rank == 1  # "bezoekers", "tentoonstelling"
    assert found.fulltext_translated  # by the translations alone
    # a word of the visitor's own in it too: not by translations alone
    assert not expo(knowledge_search("How many visitors came to the Hanzetijd exhibition?")).fulltext_translated
    # the translated match lowers the relevance floor only because the second model finds the
    # passage too: judged by the primary model alone, it is not enough (agreement left out: the
    # dense rankings walk an HNSW index, whose walk earlier tests' deleted rows can change)
    hit = dataclasses.replace(expo(knowledge_search(question)), agreement=0)
    assert hit.fulltext_translated and hit.second_score is not None
    assert relevance([hit], embedders, question) == [True]
    assert relevance([hit], embedders[:1], question) == [False]
    monkeypatch.setattr(translation, "translations", lambda *args, **kwargs: [])
    assert expo(knowledge_search(question)).fulltext_rank is None  # no word of the question is in it


def test_a_serving_process_embeds_the_vocabulary_as_it_starts(kb):
    translation._vocabularies.clear()
    words = warm_vocabulary()
    assert words > 100 and len(translation._vocabularies) == 1
    (kept_words, matrix), = translation._vocabularies.values()
    assert len(kept_words) == words == matrix.shape[0]


def test_a_question_is_searched_with_its_words_in_the_other_language(monkeypatch):
    known = translation.vocabulary([*DUTCH, "Hij leidt een team."])
    assert "leidt" in translation.translations(["leiden"], known)  # what the model makes of the name
    # the words only Dutch pages use, for an English question: a visitor's word by the knowledge
    # base's word for it; a name is not translated
    monkeypatch.setattr(query, "_read_vocabulary", lambda: (known, {"en": frozenset(known)}))
    found = set(query.translations("How many visitors came to Leiden?"))
    assert "bezoekers" in found and "leidt" not in found


@pytest.mark.parametrize(("question", "word", "listed"), [
    ("Does he speak German?", "german", "duits"), ("Werkt ze ook in Duitsland?", "duitsland", "germany"),
    ("Heeft hij Duitse klanten?", "duitse", "german"),
    ("does he speak german?", "german", "duits"),  # no capital, but speaking makes it the language
])
def test_a_language_or_country_is_searched_by_its_listed_name_as_the_visitors_own_word(question, word, listed):
    # listed, not a model's guess: it counts as the visitor's word (the relevance floor trusts it),
    # and it is no translation to look up
    assert query._question_words(question)[listed] == word
    assert listed not in query.translations(question)  # not twice, and not at a translation's weight
    terms, groups, only_translated = query.weighted_terms(question)
    (alone,) = query.weighted_terms(listed)[1]  # the listed word's own lexemes ("duit")
    assert any(set(alone) <= set(lexemes) for lexemes in groups) and not only_translated
    assert all(terms[lexeme] == 1.0 for lexeme in alone)  # weighted as the visitor's words


@pytest.mark.parametrize(("question", "listed"), [
    ("Does he like fries?", "frisian"), ("Does the hotel have two pools?", "polish"),
    ("did he ever work in germany?", "duitsland"),
])
def test_a_listed_name_written_without_a_capital_is_searched_as_a_translation(question, listed):
    # "fries" and "pools" are words of their own: their counterpart joins the search at a
    # translation's weight, and lowers the relevance floor only where the second model confirms it
    assert listed not in query._question_words(question)
    assert listed in query.translations(question)
    terms, _, only_translated = query.weighted_terms(question, query.translations(question))
    (alone,) = query.weighted_terms(listed)[1]
    assert set(alone) <= only_translated and all(terms[lexeme] < 1.0 for lexeme in alone)


def test_a_new_version_of_the_vocabulary_embeds_only_its_new_words(monkeypatch):
    embedder, _ = translation.word_model()
    translation.prepare(translation.vocabulary(DUTCH))
    embedded: list[str] = []
    original = type(embedder).passages

    def passages(self, texts):
        embedded.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(type(embedder), "passages", passages)
    edited = translation.vocabulary([*DUTCH, "Hij repareert fietsen."])
    translation.prepare(edited)
    assert embedded == ["fietsen", "repareert"]
    assert translation.translations(["bicycles"], edited) == ["fietsen"]


def test_a_search_never_waits_for_the_vocabulary_to_be_embedded():
    known = translation.vocabulary(["De tentoonstelling trok veel bezoekers.", "Een nieuw woord: vergezicht."])
    translation._vocabularies.clear()
    # not embedded yet: nothing now, the vocabulary embedded in the background
    assert translation.translations(["visitors"], known, wait=False) == []
    for thread in threading.enumerate():
        if thread.name == "embed-vocabulary":
            thread.join(timeout=60)
    assert translation.translations(["visitors"], known, wait=False) == ["bezoekers"]


def test_a_failing_model_costs_the_search_its_translations_not_its_answer(monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("model gone")

    monkeypatch.setattr(query, "_read_vocabulary", lambda: (["bezoekers"], {"en": frozenset({"bezoekers"})}))
    monkeypatch.setattr(translation, "translations", broken)
    assert query.translations("Does he speak German to his visitors?") == []
    assert "not translated" in caplog.text
    assert "duits" in query._question_words("Does he speak German to his visitors?")  # listed, still searched


def test_the_vector_cache_drops_the_least_recently_used_not_everything(monkeypatch):
    from collections import OrderedDict

    import numpy as np

    class Counting:
        name = "counting"
        made: list[str] = []

        def passages(self, texts):
            self.made.extend(texts)
            return [np.ones(2) * len(t) for t in texts]

    monkeypatch.setattr(translation, "CACHE_LIMIT", 2)
    cache, embedder = OrderedDict(), Counting()
    translation.cached_vectors(cache, embedder, ["a", "bb"])
    translation.cached_vectors(cache, embedder, ["a"])  # used again: kept
    translation.cached_vectors(cache, embedder, ["ccc"])  # full: "bb" goes, not the whole cache
    assert list(cache) == [("counting", "a"), ("counting", "ccc")] and embedder.made == ["a", "bb", "ccc"]

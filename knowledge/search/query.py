"""A question read for the full-text search: its words, their stems in both languages, the
words of the topics it names, and its words in the knowledge base's other language."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings
from django.db import connection

from knowledge import topics, translation
from knowledge.embedders import get_embedders
from knowledge.models import KnowledgeChunk
from knowledge.watch import WATCH
from text.counterparts import counterparts
from text.language import detect_language
from text.lexicon import question_words
from text.names import name_words
from text.names import names as names_of_text
from text.words import PARTS

logger = logging.getLogger(__name__)
# Question words carry no content, and Postgres' stop lists keep some of them ("waar", "welke").
QUESTION_WORDS = question_words()
# A word of a topic the question names (knowledge.topics: "study" names education, so
# "degree", "university" and "opleiding" join the query) counts this much of the visitor's own.
EXPANSION_WEIGHT = 0.5


def query_lexemes(query: str) -> list[str]:
    """The question's stems, in both stemmers' forms.

    A word that either language treats as a stop word is dropped: "die", "over" or "had" are
    noise in a bilingual index even where only one language lists them.
    """
    return [lex for lex, weight in query_terms(query).items() if weight == 1.0]


def _question_words(query: str) -> dict[str, str]:
    """The question's words (question words left out), each with the word it stands for."""
    words = [w for w in dict.fromkeys(w.lower() for w in PARTS.findall(query)) if w not in QUESTION_WORDS][:64]
    # A Dutch past participle ("gestudeerd", "gewerkt") has no stem in common with the text's
    # "studeerde" or "werkt": the word without its "ge-" is searched too, as the same word.
    participles = {w[2:]: w for w in words if w.startswith("ge") and len(w) >= 7 and w.endswith(("d", "t"))}
    # A language's or country's name is the same name in the other language ("Duits" for
    # "German", ``text.counterparts``): listed, not a model's guess. Only as a name, with a
    # capital or asked with speaking ("does he speak german?"): "pools" and "fries" are words of
    # their own (``translations`` reads them).
    named = topics.listed_names(query)
    names = {other: w for w in words if w in named for other in sorted(counterparts(w)) if other != w}
    return {w: w for w in words} | {p: w for p, w in (participles | names).items() if p not in words}


def query_terms(query: str) -> dict[str, float]:
    """Full-text lexemes for a question with their weights: 1 for the visitor's own words,
    ``EXPANSION_WEIGHT`` for the words of the topics the question names (knowledge.topics)."""
    return weighted_terms(query)[0]


def weighted_terms(query: str, translated: Sequence[str] = ()) -> tuple[dict[str, float], list[list[str]], set[str]]:
    """The weighted lexemes, the lexemes of each of the visitor's own content words, and the
    lexemes only ``translated`` give (the visitor's words in the other language:
    ``translations``; weighted as a topic's words)."""
    own = _question_words(query)
    if not own:
        return {}, [], set()
    expanded = [w for w in topics.expansion(query) if w not in own]
    extra = [*expanded, *(w for w in translated if w not in own and w not in expanded)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT w, tsvector_to_array(to_tsvector('english', w)), "
            "tsvector_to_array(to_tsvector('dutch', w)) FROM unnest(%s::text[]) AS w",
            [list(own) + extra],
        )
        rows = cursor.fetchall()
    terms: dict[str, float] = {}
    groups: dict[str, list[str]] = {}
    given: set[str] = set()  # by the visitor's words or their topics
    for word, english, dutch in rows:
        if english and dutch:
            weight = 1.0 if word in own else EXPANSION_WEIGHT
            for lexeme in english + dutch:
                terms[lexeme] = max(terms.get(lexeme, 0.0), weight)
            if word in own:
                groups.setdefault(own[word], []).extend(english + dutch)
            if word in own or word in expanded:
                given.update(english + dutch)
    return terms, [list(dict.fromkeys(lexemes)) for lexemes in groups.values()], set(terms) - given


def translations(query: str, language: str | None = None) -> list[str]:
    """The question's words in the other language, so the full text finds a fact written in it
    by its words, not by the dense rankings alone: any word but a name (word vectors cannot be
    trusted with names: "Leiden" is not "leidt"; nor with the owner's; a language's or country's
    name has its listed counterpart among the question's own words, ``_question_words``, unless
    written without a capital: then its counterpart is a translation) by the words only the
    knowledge base's documents in the other language use that translate it
    (``knowledge.translation``: "bezoekers" for "visitors"). Never waits for the vocabulary's
    embedding: while it runs (a process just started), only lower-case listed names."""
    owner = set(name_words(settings.TWIN_OWNER_NAME))
    asked = [word for word in _question_words(query) if word not in owner]
    named = names_of_text(query)
    # a listed name written without a capital may be a word of its own ("fries", "pools"): its
    # counterpart joins as a translation, which lowers the relevance floor only when the second
    # model confirms the passage (is_relevant)
    own = set(asked)
    named_listed = topics.listed_names(query)
    listed = [other for word in asked if word not in named_listed
              for other in sorted(counterparts(word)) if other not in own]
    plain = [word for word in asked if word not in named and counterparts(word) == {word}]
    found: list[str] = []
    if plain and translation.word_model() is not None:
        words, foreign = WATCH.cached("vocabulary", _read_vocabulary)
        among = foreign.get(language or detect_language(query))
        try:
            found = translation.translations(plain, words, among, wait=False) if among else []
        except Exception:  # they only widen the search: it goes on without them
            logger.warning("search: the question's words were not translated", exc_info=True)
    return list(dict.fromkeys([*listed, *found]))


def warm_vocabulary() -> int:
    """Embed the knowledge base's words for their translations as a serving process starts
    (``twinsite.asgi``), not in its first search. Returns how many words were embedded (0
    without a multilingual model)."""
    if translation.word_model() is None:
        return 0
    words, _ = WATCH.cached("vocabulary", _read_vocabulary)
    return len(words) if translation.prepare(words) else 0


def _read_vocabulary() -> tuple[list[str], dict[str, frozenset[str]]]:
    """The knowledge base's ``translation.vocabulary``, and for each language the words that
    only its other language's documents use (a loanword both use is no translation)."""
    texts: dict[str, list[str]] = {}
    primary = get_embedders()[0].name  # each chunk once
    rows = KnowledgeChunk.objects.filter(embed_model=primary).order_by().values_list("document__lang", "text")
    for lang, text in rows.distinct():
        texts.setdefault(lang, []).append(text)
    by_language = {lang: set(translation.vocabulary(found)) for lang, found in texts.items()}
    words = sorted(set().union(*by_language.values()))[:translation.VOCABULARY_LIMIT]
    foreign = {lang: frozenset(w for other, known in by_language.items() if other != lang for w in known)
               - by_language.get(lang, set()) for lang in {"en", "nl", *by_language}}
    return words, foreign


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as a quoted ``tsquery`` operand."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"

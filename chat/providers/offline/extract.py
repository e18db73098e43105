"""Which sentences of the retrieved passages answer the question: the extractive half of the
offline twin. Deterministic and explainable: every sentence gets a score from parts that can be
listed (shared words, the question's topic, the kind of fact asked for, the passage's rank and
language), and the best one or two are quoted.

The kind of question decides what a good answer contains: "where" wants a place or an
institution, "when" a date, "how many" a number, "why" a reason. The first sentence of a
document usually introduces the document ("This CV lists her roles ..."); it answers only a
question about the thing itself ("What is Floodmap?").
"""

from __future__ import annotations

from dataclasses import dataclass

from chat.providers.offline.dense import nearest as dense_nearest
from chat.providers.offline.dense import similarities as dense_similarities
from chat.providers.offline.evidence import (
    _counts,
    _holds_evidence,
    _past_only,
    _years,
)
from chat.providers.offline.lexicon import (
    _GENERAL_WORDS,
    _WEAK_WORDS,
    META,
)
from chat.providers.offline.passage import (
    Passage,
    Quote,
)
from chat.providers.offline.picking import (
    _best_first,
    _pick,
    _Scored,
)
from chat.providers.offline.question import (
    Found,
    _Question,
    _read_question,
)
from knowledge.translation import translated
from text.counterparts import counterparts
from text.forms import same_word
from text.language import detect_language
from text.names import capitalised
from text.sentences import split_sentences
from text.words import content_words


def _matches(wanted: list[str], found: list[str]) -> int:
    """How many of ``wanted`` appear in ``found`` in some form."""
    return sum(1 for w in wanted if any(same_word(w, f) for f in found))


@dataclass(frozen=True)
class _Context:
    """What one passage brings to each of its sentences."""

    index: int
    passage: Passage
    covers: set[str]  # the question's words its title or heading contains
    named: set[str]  # the question's names it holds
    bonus: float  # added to each sentence's score (see _context)
    in_language: bool
    years: frozenset[str]  # the years its title, heading and text name
    subjects: bool = False  # it names one of the question's subjects (_Question.subjects)
    names_kind: bool = False  # its title or heading names the kind asked for ("Which languages ...?", "Talen")


def choose(question: str, passages: list[Passage], *, lang: str, owner: str, limit: int = 2,
           subjects: frozenset[str] = frozenset()) -> list[Quote]:
    """The quotes that answer ``question``, best first; empty when no passage does.

    A sentence scores 1 for each of the question's words it contains (2 for the noun of "which
    database"), 0.75 when it speaks of the question's topic (knowledge.topics), 1.5 when it holds
    the kind of fact asked for, 1 for each name the question uses that its passage holds (0.5 more
    when the sentence says it), up to 1 when its passage's title or heading names what was asked,
    a little for the retriever's rank and for the visitor's language; it loses 0.75 when it opens
    a document (unless the question asks what something is) and 2 when it speaks of the document
    itself ("This CV lists ..."). A word the passage's title or heading names already, or a verb
    that says little ("use"), counts half. A second sentence is quoted only when it adds one of the
    question's words the first lacks (scoring at least half the first), or when the question asks
    for a description (at least 0.75), or when it scores nearly as well as the first (``_TIE``:
    which of the two answers is not for the scores to tell). Only sentences that speak of what
    was asked (``_Question.links``) are quoted at all. ``subjects``: the words of the knowledge base's
    document titles; a question that names one ("What did the Harbour app cost to build?") is about that
    subject, and the availability pages answer it only where they name it too.
    """
    asks = _read_question(question, passages, owner, subjects)
    meaning = dense_similarities(question, [s for passage in passages for s in split_sentences(passage.text)])
    nearest = dense_nearest(meaning)
    scored = [item for p, passage in enumerate(passages)
              for item in _score_passage(asks, _context(asks, p, passage, lang), nearest, meaning)]
    ranked = sorted((s for s in scored if s.linked), key=_best_first)
    if not ranked and not asks.focus:
        # passages picked for the question's subject (availability) answer it even in other words,
        # unless it asks about something of its own that none of their sentences names ("Will
        # his rate rise next year?", "Does client X get a discount?"): then there is no answer
        ranked = sorted((s for s in scored if passages[s.passage].on_topic and s.possible), key=_best_first)[:1]
    if not ranked:
        return []
    picked = _pick(ranked, asks, limit)
    if _lists_asked(asks, passages[picked[0].passage]):
        # "Welke talen spreekt hij?" and the best passage is the list under "Talen": all of it answers
        picked = [s for s in scored if s.passage == picked[0].passage][:_LIST_ITEMS]
    quotes: dict[int, list[_Scored]] = {}
    for item in picked:
        quotes.setdefault(item.passage, []).append(item)
    return [
        Quote(passages[p].title, passages[p].heading, [s.sentence for s in sorted(items, key=lambda s: s.index)])
        for p, items in quotes.items()
    ]


_LIST_ITEMS = 6


def _lists_asked(asks: _Question, passage: Passage) -> bool:
    """Whether the question asks for the things its passage's heading names ("Which languages
    ...?" and the section "Languages"): a list, not one sentence of it."""
    if not asks.answer_type or not passage.heading:
        return False
    heading = content_words(passage.heading.rsplit(">", 1)[-1])
    # "Which languages does he speak?" and "Talen": the heading names the topic that is the kind
    # asked for (see _context)
    return any(same_word(asks.answer_type, word) for word in heading) or (
        asks.answer_type in asks.ambiguous and _names_topic(asks, heading))


def _names_topic(asks: _Question, words: list[str]) -> bool:
    """Whether ``words`` (a title or heading) name the question's topic by one of the topic's own
    words: "Talen" for "Which languages does he speak?"; not "Programmeertalen" (a compound of
    one: a kind of it) nor "Programming languages" (by the question's own ambiguous word)."""
    own = set(asks.topic_words)
    return any(word in own and not any(same_word(a, word) for a in asks.ambiguous) for word in words)


def _context(asks: _Question, index: int, passage: Passage, lang: str) -> _Context:
    """A passage's share of each sentence's score: the names it holds, a title or heading that
    names what was asked, the retriever's rank and the visitor's language."""
    context = content_words(f"{passage.title} {passage.heading}")
    covers = {w for w in asks.asked if any(same_word(w, c) for c in context)}
    context_bonus = 0.5 * min(len(covers) + (1 if _matches(asks.topic_words, context) else 0), 2)
    # a name counts for the passage that holds it (in its title or anywhere in its text), once
    everywhere = context + content_words(passage.text)
    named = {w for w in asks.names if w in asks.asked and any(same_word(w, f) for f in everywhere)}
    in_language = detect_language(passage.text) == lang
    bonus = min(len(named), 2) + context_bonus + (0.3 if in_language else 0.0) + 0.4 / (1 + passage.rank)
    # read only when the question names a year: most do not
    years = _years(f"{passage.title} {passage.heading} {passage.text}") if asks.years else frozenset()
    subjects = any(same_word(w, f) for w in asks.subjects for f in everywhere)
    # "Which languages does he speak?" and the heading "Talen": a kind that names its topic only
    # with the question's other words is that topic, so a heading that names the topic names it
    # ("Which sport ...?" asks for less than a heading "Outside work" names)
    names_kind = asks.answer_type in asks.ambiguous and _names_topic(asks, context)
    return _Context(index, passage, covers, named, bonus, in_language, years, subjects, names_kind)


def _sentence_words(asks: _Question, ctx: _Context, sentence: str) -> tuple[list[str], set[str], set[str]]:
    """A sentence's content words, the question's words it holds as written, and those it holds
    in all (in a passage of the other language, also by translation)."""
    found = [w for w in content_words(sentence) if w not in asks.owner_words]
    own_words = {w for w in asks.asked if any(same_word(w, f) for f in found)}
    if asks.listed:  # "Duits" says "German"
        listed = [counterparts(f) for f in capitalised(sentence)]
        own_words |= {w for w, forms in asks.listed.items() if any(forms & other for other in listed)}
    # a word that names nothing ("jaar", "go") translates nothing worth finding ("annual salary")
    unfound = [w for w in asks.asked if w not in own_words and w not in _GENERAL_WORDS]
    covers = own_words | (translated(unfound, [f for f in found if f not in _GENERAL_WORDS])
                          if not ctx.in_language else set())
    return found, own_words, covers


def _score_passage(asks: _Question, ctx: _Context, nearest: str | None = None,
                   meaning: dict[str, float] | None = None) -> list[_Scored]:
    """Each sentence of a passage with its score and whether it speaks of what was asked.

    In a passage in the other language than the question's, a question's word counts as found
    when a sentence's word translates it (``knowledge.translation.translated``). The one sentence the model puts
    clearly nearest the question in meaning (``dense.nearest``) speaks of what was asked when it
    holds the kind of fact asked for and one of the question's words (or its passage's title or
    heading does): "How long did the line stand still?" finds "De lijn stond 52 uur stil" this way
    where one shared word alone is too little. A question that asks for no kind of fact ("What is
    her salary?") gets no such help: the nearest sentence is always near something."""
    scored = []
    # what its title or heading says of the question: its words, and the kind asked for where the
    # heading names it by its topic (counted for the link, not again in each sentence's score)
    context_covers = ctx.covers | ({asks.answer_type} if ctx.names_kind else set())
    for i, sentence in enumerate(split_sentences(ctx.passage.text)):
        found, own_words, covers = _sentence_words(asks, ctx, sentence)
        # the topic in other words than the question's ("cat" for "pets"), or the language
        # asked about ("Duits" for "Does he speak German?")
        on_topic = [f for f in found if any(same_word(t, f) for t in asks.topic_words)]
        related = bool(on_topic) or bool(own_words & asks.languages)
        # a kind asked for that names the topic only with the question's other words ("Which
        # languages does he speak?": a programming language?) is found twice only on the topic
        # ("The controllers, software and languages ..." is on the topic by that word alone)
        confirmed = ctx.names_kind or any(not any(same_word(a, f) for a in asks.ambiguous) for f in on_topic)
        doubled = asks.answer_type if confirmed or asks.answer_type not in asks.ambiguous else ""
        evidence = _holds_evidence(asks.kind, sentence, asks.measure)
        counts = evidence and _counts(asks.counted, sentence, translate=not ctx.in_language)
        score = (sum(_weight(w, ctx.covers) * (2 if w == doubled else 1) for w in covers - asks.names)
                 + 0.5 * len(covers & asks.names)  # the passage holds the name; this sentence says it
                 + (0.75 if related else 0.0) + (1.5 if evidence else 0.0) + (1.0 if counts else 0.0) + ctx.bonus)
        related = related or bool(covers & asks.triggers)
        if asks.present and _past_only(sentence):
            score -= 0.5  # "Which university does she work for?" is not answered by her degree of 2014
        if META.search(sentence):
            score -= 2.0  # a sentence about the document itself ("This CV lists ...") answers nothing
        elif i == 0 and not ctx.passage.heading and not asks.defines:
            score -= 0.75  # a document's opening sentence introduces the document
        # "What grade did she get for her PhD?": the PhD and the topic (education), but no grade
        typed = not asks.answer_type or asks.answer_type in covers | context_covers
        linked = asks.about_owner or asks.links(Found(covers, context_covers, own_words, related, evidence, typed),
                                                on_topic=ctx.passage.on_topic) \
            or (sentence == nearest and evidence and bool(covers | context_covers))
        # "Does he speak Spanish?" is not answered by the other languages he speaks
        linked = linked and (not asks.languages or bool(own_words & asks.languages))
        # what can never answer: no amount for "what does it cost", a passage that names no year of
        # "What will a keynote cost in 2028?"
        # the rates page does not say what "the Harbour app" cost, unless it names it
        possible = (not (asks.measure and not evidence) and asks.years <= ctx.years
                    and not (ctx.passage.on_topic and asks.subjects and not ctx.subjects))
        scored.append(_Scored(score, linked and possible, ctx.index, i, sentence, frozenset(covers | context_covers),
                              ctx.in_language, (meaning or {}).get(sentence, 0.0), possible))
    return scored


def _weight(word: str, context_covers: set[str]) -> float:
    """A found word's worth: half for a word the passage's title or heading gives already (the
    sentence repeats it, it does not add it) or a verb that says little ("use")."""
    return 0.5 if word in _WEAK_WORDS or word in context_covers else 1.0

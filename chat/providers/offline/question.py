"""What a question asks, read once for every sentence of every passage: its kind, what it
measures, its own words, names and topics, and whether a sentence speaks of what it asks."""

from __future__ import annotations

from dataclasses import dataclass, field

from chat.providers.offline.evidence import (
    _ASKED_YEAR,
    _PAST,
    _PRESENT,
    _YEAR,
)
from chat.providers.offline.lexicon import (
    _ANSWER_TYPE,
    _BESIDES,
    _COUNTED,
    _DEFINE,
    _FRAME_WORDS,
    _GENERAL_WORDS,
    _KINDS,
    _MEASURES,
    _TIME_PHRASES,
    _WAAR,
    THEN,
)
from chat.providers.offline.passage import (
    Passage,
)
from knowledge import topics
from text.counterparts import counterparts, is_language
from text.names import names as names_of_text
from text.words import STOP_WORDS, content_words, words


def question_kind(question: str) -> str | None:
    """``when``, ``quantity``, ``why``, ``who``, ``where`` or None. The kind asked first wins:
    "How many bridges did she inspect when she lived in Ghent?" asks a number, its "when" only
    says which years it is about."""
    found = [(match.start(), order, kind) for order, (kind, pattern) in enumerate(_KINDS)
             if (match := pattern.search(question))]
    if found:
        return min(found)[2]
    return "where" if _WAAR.search(question) else None


def question_measure(question: str) -> str | None:
    """``duration``, ``money`` or ``weight`` for a question that asks how long, what something
    costs or how heavy it is."""
    return next((measure for measure, pattern in _MEASURES if pattern.search(question)), None)


@dataclass(frozen=True)
class Found:
    """What one sentence (with its passage's title and heading) holds of the question."""

    covers: set[str]  # the question's words it holds, found or translated
    context_covers: set[str]  # the question's words its title or heading holds (and a kind it names)
    own_words: set[str]  # the question's words it holds as written, untranslated
    related: bool  # it speaks of the question's topic (or of a language asked about, or a trigger)
    evidence: bool  # it holds the kind of fact asked for
    typed: bool  # the noun of "which X" is there, or none is asked


@dataclass(frozen=True)
class _Question:
    """What a question asks, read once for every sentence of every passage."""

    owner_words: set[str]
    kind: str | None  # question_kind
    measure: str | None  # question_measure: what a quantity question measures
    asked: list[str]  # its own content words, without the owner's name and the kind's frame words
    topic_words: list[str]  # the words of the topics it names, besides its own
    names: set[str]
    focus: set[str]  # what it is about beyond names and topics: a sentence must speak of half of it
    triggers: set[str]  # its own words that name its topic
    defines: bool  # "What is ...?"
    answer_type: str  # the noun of "which database", or ""
    counted: str  # the noun of "how many students", or ""
    years: frozenset[str]  # the years it names ("in 2028"): a passage that names none of them does not answer
    about_owner: bool  # "Who is Sam?": every passage the search found is about her
    subjects: frozenset[str] = frozenset()  # the names it uses that name a document's subject ("Harbour")
    present: bool = False  # asked of now ("Which university does she work for?"), not of her past
    # its names of languages and countries, with their forms in either language
    # (text.counterparts: "german": "german", "duits"), written with a capital or with speaking
    listed: dict[str, frozenset[str]] = field(default_factory=dict)
    languages: frozenset[str] = frozenset()  # the languages it asks whether the owner speaks ("German")
    ambiguous: frozenset[str] = frozenset()  # its triggers that name no topic alone ("languages", "speak")

    def links(self, found: Found, *, on_topic: bool) -> bool:
        """Whether a sentence speaks of what was asked (else it is not quoted, however it scores).

        It must contain one of the question's own words (two of a long question's, one of them
        may be in its title or heading). A question of only names and topics ("Does she hold a
        Kubernetes certification?") needs the name or the topic. A name with the kind of fact
        asked for ("How many cities use Floodmap?": a number) is enough, also in the other
        language, and so is a name for "What is ...?", and a name with the question's topic
        (``found.typed``: unless the question asks "which X" and the sentence names no X). On the
        availability pages (``on_topic``) a word or the fact asked for is enough.
        """
        focus, context_covers = self.focus, found.context_covers
        # the availability pages speak of rates and dates throughout: a translated "hourly rate"
        # says nothing of "Will his hourly rate rise next year?"
        covers = found.own_words if on_topic else found.covers
        # in a long question (three words or more besides names and topics) its topic counts as
        # one of them; "Which languages ...?" asks for the topic itself
        asks_topic = self.answer_type in self.triggers
        in_sentence = len(covers & focus) + (1 if found.related and (len(focus) >= 3 or asks_topic) else 0)
        # with the fact asked for ("How long was the oven down ...?": "De oven stond 52 uur
        # stil"), one of a long question's words is enough
        if focus and (in_sentence >= 2 or (in_sentence and (len(focus) < 4 or context_covers & focus
                                                            or found.evidence))):
            return True
        if len(focus) >= 2 and focus <= context_covers:
            return True  # "What programming languages does he use?" under "Programming languages"
        named = bool((covers | context_covers) & self.names)
        if not focus and (named or (found.related and found.typed) or (covers and found.evidence)):
            return True  # "Where does he work now?": only general words, so the place must be there too
        if named and (found.evidence or self.defines or (found.related and found.typed)):
            return True  # "Does she hold a PRINCE2 certificate?": the name and the topic (certificates)
        # On the availability pages every sentence is on the subject, so a question's own words
        # must be there, or the fact asked for: a date for "when" that names no other topic (the
        # page's dates say when the owner is free), else a fact in a sentence on the question's
        # topic. "Hoeveel verdient hij per jaar?" is not answered by a day rate, nor "Will his
        # hourly rate rise next year?" by the dates of the agenda.
        if not on_topic:
            return False
        dated = found.evidence and self.kind == "when" and not self.triggers
        return bool(covers & focus) or (not focus and bool(covers)) or dated or (found.evidence
                                                                                 and (not focus or found.related))


def _read_question(question: str, passages: list[Passage], owner: str,
                   subjects: frozenset[str] = frozenset()) -> _Question:
    owner_words = set(words(owner))
    measure = question_measure(question)
    kind = question_kind(question) or ("quantity" if measure else None)
    # words of a phrase such as "spare time" are the topic's, not words to find one by one, and
    # "year" in "which year" is the kind of answer, not a word of it
    frame = topics.phrase_words(question) | (_FRAME_WORDS.get(kind, set()) if kind else set())
    asked = [w for w in dict.fromkeys(content_words(_TIME_PHRASES.sub(" ", question)))
             if w not in owner_words and w not in frame]
    # "Is she around right now?", "Wat deed ze hiervoor?" ask something, if not what: not about her in general
    timed = bool(_TIME_PHRASES.search(question) or THEN.search(question))
    topic_words = sorted(topics.topic_words(topics.topics_of(question)) - set(asked))
    naming = topics.naming_words(question)
    # "Spanish", or "spanish" asked with speaking ("does he speak spanish?"); not "fries" or "pools"
    named = topics.listed_names(question)
    listed = {w: forms for w in asked if w in named and len(forms := counterparts(w)) > 1}
    # names: capitalised in the question, or the name of a retrieved document ("floodmap-cli")
    titles = {w for passage in passages for w in content_words(passage.title)}
    written = names_of_text(question) - owner_words
    names = written | ({w for w in asked if w in titles} - owner_words)
    # "Which database ...?": a sentence that names a database answers it
    typed = _ANSWER_TYPE.search(question)
    # the names a "besides" leaves out ("besides English", "andere talen dan Engels"): the others are asked
    besides = {w for match in _BESIDES.finditer(question) for w in words(match.group("rest"))}
    return _Question(
        owner_words=owner_words, kind=kind, measure=measure, asked=asked, topic_words=topic_words, names=names,
        focus={w for w in asked if w not in names and w not in _GENERAL_WORDS and w not in naming},
        triggers={w for w in asked if w in naming}, defines=bool(_DEFINE.search(question)),
        ambiguous=frozenset(w for w in asked if w in naming and not topics.topics_of(w)),
        # "In which city ...?": the kind of fact asked for (a place) says it already
        answer_type=typed.group(1).lower() if typed and typed.group(1).lower() not in frame | STOP_WORDS
        else "",
        counted=counted.group(1).lower() if (counted := _COUNTED.search(question)) else "",
        years=frozenset(_ASKED_YEAR.findall(question)),
        # "How old is Sam?" asks a fact, "Who is Sam?" asks about her
        about_owner=not asked and not topic_words and not frame and not timed,
        subjects=frozenset(w for w in written if w in subjects and not w.isdigit()),
        listed=listed,
        # "Does he speak German?"; not the English of "Does he speak anything besides English?"
        languages=frozenset(w for w in listed if w in naming and is_language(w) and w not in besides)
        if not kind and not typed else frozenset(),
        present=bool(_PRESENT.search(question)) and not (_PAST.search(question) or THEN.search(question)
                                                         or _YEAR.search(question)),
    )

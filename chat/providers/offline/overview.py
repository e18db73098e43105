"""Questions a single passage cannot answer: the owner's profile, and an overview of a kind of
document. Read from the words a visitor of any owner uses, never from the owner's material.

"What does she do?", "What kind of work does Noor do?", "Wat voor werk doe je?" ask for the
profile: nothing is left of them but the owner, general verbs and words for work. "Which
projects has he done?", "What has she written?", "Welke projecten heeft ze gedaan?" ask for every
document of a kind: nothing is left but the kind's words.
"""

from __future__ import annotations

import re

from chat.providers.offline.lexicon import THEN, WORDS
from chat.providers.offline.question import question_kind
from knowledge.topics import owner_references
from text.lexicon import shared
from text.names import name_words
from text.words import content_words
from text.words import words as words_of_text

# What visitors call each kind of document that comes in numbers (a site has one CV, one about
# page, but many projects and articles).
KIND_WORDS: dict[str, frozenset[str]] = {kind: WORDS.words(f"documents.{kind}") for kind in ("project", "article")}
# Words that leave a question as general as it was: verbs of having and doing, the owner, and
# ways to ask for a list.
_SHARED = shared()
_GENERAL = WORDS.words("overview.general")
# what a question about the owner's work or profile is made of, and what says who someone is
# ("a short bio")
_PROFILE_WORDS = WORDS.words("overview.profile")
# The question word opens the question, after a preposition at most ("Aan welke projecten ...?",
# "For which clients ...?"), or after a clause of nothing but softening words ("In a nutshell,
# what ...?"; not "Other than work, what does she do?").
_ASKS = re.compile(r"^\s*(?:(?:aan|in|met|voor|bij|op|van|over|at|for|with|on|from|to)\s+)?"
                   r"(?:what|who|which|tell|wat|wie|welke?|vertel)\b", re.IGNORECASE)
# words that only soften or summarise what follows, and greetings ("hi, who is Sam?")
_SOFTENING = WORDS.words("overview.softening")
# the same words before the question word without a comma: "so what does she do for a living?"
_LEADING = re.compile(r"^\s*(?:(?:" + "|".join(sorted(_SOFTENING - {"in", "a", "het"}, key=len, reverse=True))
                      + r")\b[\s!.]*)+", re.IGNORECASE)
_WHO = re.compile(r"^\s*(?:who|whom|wie)\b", re.IGNORECASE)
# "Has she written any articles?", "Heeft hij weleens projecten gedaan?": yes, and these
_HAS = re.compile(r"^\s*(?:has|have|did|does|heeft|hebben|had|deed)\b", re.IGNORECASE)
# the same asked as a request to name them ("Can you name a few projects?", "Kun je een paar
# projecten noemen?"); not a request for work ("Can you build a project for us?")
_REQUEST = re.compile(r"^\s*(?:(?:can|could|would|will)\s+you|(?:kun|kan|kunt|wil|wilt)\s+(?:je|jij|u))\b"
                      r"(?=.*\b(?:name|list|mention|show|tell|give|noemen|noem|opnoemen|geven|vertellen|laten zien)\b)",
                      re.IGNORECASE)


# Where what the visitor tells first ends and a question may start: after a full stop, a colon or
# a spaced dash ("We run a bakery. Which projects ...?", "I'm writing our programme - can you ...?").
_SEPARATOR = re.compile(r"(?:[.!:;]|(?<=\s)[-\u2013\u2014])\s+")
_LAST_QUESTION = re.compile(r"[^.!:;?\n]*\?\s*")
# a question and what it asks for in more words after it ("Has she written anything? Articles, books?")
_SAID_AGAIN = re.compile(r"([^.!:;?\n]*\?)\s+[^.!:;?\n]*\?\s*")
# what opens a question of its own: a question word or a verb first
_OWN_QUESTION = re.compile(rf"^\s*(?:{_SHARED.alternation('question.words', 'question.auxiliaries')}|tell|vertel|"
                           r"may|zijn|wil|wilt|moet|mag|doet|doen|gaat)\b", re.IGNORECASE)
_TAILS = 3  # separators read back from the end: a question is one of the last sentences


def _question_part(question: str) -> str:
    """The question a message ends with, without what the visitor tells before it, or the
    question before a last one that only says what it means in more words ("Has she written
    anything? Articles, books?"); the whole message when it does not end with a question of its
    own ("What does she do - in short?")."""
    question = question.strip()
    separators = list(_SEPARATOR.finditer(question))[-_TAILS:]
    start = separators[-1].end() if separators else 0
    if (said := _SAID_AGAIN.fullmatch(question, start)) and _is_question(said.group(1)) \
            and not _OWN_QUESTION.search(question[said.end(1):]):
        return said.group(1).strip()
    for separator in reversed(separators):
        tail = question[separator.end():]
        if not _LAST_QUESTION.fullmatch(tail):
            break  # an earlier separator's tail holds what stops this one too
        if _is_question(tail):
            return tail
    return question


def _is_question(text: str) -> bool:
    return bool(_asks(text) or _HAS.search(text) or _REQUEST.search(text))


def _asks(question: str) -> str | None:
    """The question from its question word on, or None when it does not open with one."""
    head, comma, rest = question.partition(",")
    if comma and set(words_of_text(head)) <= _SOFTENING:
        question = rest
    question = _LEADING.sub("", question)
    return question if _ASKS.search(question) else None


def _rest(question: str, owner: str) -> set[str]:
    return {w for w in content_words(question) if w not in owner_references(owner)}


def overview_kind(question: str, owner: str) -> str | None:
    """``project`` or ``article`` when the question asks for all documents of that kind ("Who
    worked on the project?" asks for a person)."""
    question = _question_part(question)
    question = _asks(question) or (question if _HAS.search(question) or _REQUEST.search(question) else None)
    if question is None or _WHO.search(question):
        return None
    rest = _rest(question, owner) - _GENERAL
    for kind, words in KIND_WORDS.items():
        if rest and rest <= words:
            return kind
    return None


def asks_profile(question: str, owner: str) -> bool:
    """A question about what the owner does or who the owner is, in general."""
    # "Who is Noor?" asks for the profile too; "where", "when", "how many" ask for one fact
    question = _question_part(question)
    # asked as a request, it names the owner or what the profile tells ("Can you give me a short
    # bio?"): "Can you tell me more about it?" (or "them") follows up on the question before
    named = not set(name_words(owner)).isdisjoint(words_of_text(question))
    question = _asks(question) or (question if _REQUEST.search(question) and (
        named or _rest(question, owner) & _PROFILE_WORDS) else None)
    # "What did she do before that?", "Wat deed hij daarvoor?": one time of her work, not the profile
    if question is None or question_kind(question) not in (None, "who") or THEN.search(question):
        return False
    return not (_rest(question, owner) - _GENERAL - _PROFILE_WORDS)

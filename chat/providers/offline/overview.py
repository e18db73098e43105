"""Questions a single passage cannot answer: the owner's profile, and an overview of a kind of
document. Read from the words a visitor of any owner uses, never from the owner's material.

"What does she do?", "What kind of work does Noor do?", "Wat voor werk doe je?" ask for the
profile: nothing is left of them but the owner, general verbs and words for work. "Which
projects has he done?", "What has she written?", "Welke projecten heeft ze gedaan?" ask for every
document of a kind: nothing is left but the kind's words.
"""

from __future__ import annotations

import re

from chat.providers.offline.lexicon import THEN
from chat.providers.offline.question import question_kind
from text import topics

# What visitors call each kind of document that comes in numbers (a site has one CV, one about
# page, but many projects and articles).
KIND_WORDS: dict[str, frozenset[str]] = {
    "project": frozenset("project projects projecten portfolio built build made gebouwd gemaakt bouwde maakte "
                         "worked gewerkt werkte werkten".split()),
    "article": frozenset("article articles artikel artikelen blog blogs post posts essay essays paper papers writing "
                         "writings "
                         "written wrote write publications publication published publicaties gepubliceerd "
                         "geschreven schreef schrijft".split()),
}
# Words that leave a question as general as it was: verbs of having and doing, the owner, and
# ways to ask for a list.
_GENERAL = frozenset(
    "done do does did doing gedaan doe doet deed has have had heeft hebben list lijst overview overzicht "
    "all alle some any anything something iets examples voorbeelden other andere recent recente recently onlangs "
    "owner eigenaar "
    "on aan tell vertel vertellen show toon give geef geven "
    # asking for a few by name: "Can you name a few projects?", "Kun je een paar projecten noemen?"
    "name mention few couple several paar enkele noemen noem opnoemen me mij "
    # words that only soften or summarise a question: "what does she actually do?", "in a
    # nutshell", "wat doet hij eigenlijk?", "aan welke projecten heeft ze zoal gewerkt?"
    "actually really exactly basically mainly mostly generally general briefly brief short nutshell summary "
    "summarise summarize overall eigenlijk precies zoal vooral voornamelijk algemeen kort korte samengevat "
    "kortom".split()
)
_PROFILE_WORDS = frozenset(
    "work works job jobs kind sort type profession occupation role field werk werkt baan beroep soort vak "
    "functie rol doing doe doet does do did living leven "
    # what someone is known for, and the text that says who someone is ("a short bio")
    "speciality specialty specialism specialities specialties expertise specialisatie specialiteit vakgebied "
    "bio biography biografie".split()
)
# The question word opens the question, after a preposition at most ("Aan welke projecten ...?",
# "For which clients ...?"), or after a clause of nothing but softening words ("In a nutshell,
# what ...?"; not "Other than work, what does she do?").
_ASKS = re.compile(r"^\s*(?:(?:aan|in|met|voor|bij|op|van|over|at|for|with|on|from|to)\s+)?"
                   r"(?:what|who|which|tell|wat|wie|welke?|vertel)\b", re.IGNORECASE)
_SOFTENING = frozenset(
    "so well ok okay and but in a short nutshell brief briefly general overall dus nou oké oke en maar kort kortom "
    "gezegd samengevat het algemeen "
    # greetings before the question: "hi, who is Sam?", "Hoi, wat doet ze?"
    "hi hello hey hiya hoi hallo hai goedemorgen goedemiddag goedenavond".split()
)
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
_OWN_QUESTION = re.compile(r"^\s*(?:what|who|whom|which|where|when|why|how|wat|wie|welke?|waar|wanneer|waarom|hoe|"
                           r"is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|may|heeft|hebben|"
                           r"zijn|kan|kun|kunt|wil|wilt|moet|mag|doet|doen|gaat|tell|vertel)\b", re.IGNORECASE)
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
    if comma and set(topics.words(head)) <= _SOFTENING:
        question = rest
    question = _LEADING.sub("", question)
    return question if _ASKS.search(question) else None


def _rest(question: str, owner: str) -> set[str]:
    owner_words = set(topics.words(owner))
    return {w for w in topics.content_words(question) if w not in owner_words}


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
    # bio?"): "Can you tell me more about it?" follows up on the question before
    question = _asks(question) or (question if _REQUEST.search(question) and (
        set(topics.words(question)) & set(topics.words(owner)) or _rest(question, owner) & _PROFILE_WORDS) else None)
    # "What did she do before that?", "Wat deed hij daarvoor?": one time of her work, not the profile
    if question is None or question_kind(question) not in (None, "who") or THEN.search(question):
        return False
    return not (_rest(question, owner) - _GENERAL - _PROFILE_WORDS)

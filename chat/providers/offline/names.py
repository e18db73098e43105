"""Names a question asks about that the knowledge base never writes: no sentence states a fact
about them, so the nearest sentence about something else must not answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.providers.offline.lexicon import WORDS
from text import quotes
from text.counterparts import counterparts
from text.forms import same_word, stem
from text.lexicon import shared
from text.names import SENTENCE_START, is_name, name_words
from text.words import NAMED
from text.words import words as words_of_text

# Who introduces themselves names no subject: "I'm Jan from Acme. What does she charge?" (only
# the names after it: "I'm wondering whether she used MongoDB?" still asks about MongoDB)
# capitalised words, each once: no two ways to split a run (which would backtrack exponentially)
_NAMES_RUN = r"[A-Z][\w'\u2019-]*(?:[ \t]+[A-Z][\w'\u2019-]*)*[ \t]*"
_INTRODUCTION = re.compile(rf"\b(?i:i am|i'm|my name is|this is|we are|we're|ik ben|ik heet|mijn naam is|wij zijn|"
                           rf"we zijn|namens|on behalf of)\s+{_NAMES_RUN}"
                           rf"(?:(?i:from|of|at|van|bij|uit)\s+{_NAMES_RUN})?")
_QUESTION_SENTENCE = re.compile(r"[^.?!\n]*\?")
_SHORT = 10  # words
_LONGEST = 600  # characters of question sentences read
_MAX_NAMES = 8  # read per question: a message of hundreds of capitalised words is no question
MAX_ECHO = 40  # characters of a name said back in the decline (chat.providers.offline)
# what the visitor quotes (a title, a line they saw) is not what they name
_QUOTED = re.compile(rf"(?<!\w){quotes.marks(quotes.OPENING)}[^{re.escape(quotes.QUOTES)}\n]*"
                     rf"{quotes.marks(quotes.CLOSING)}(?!\w)")
# What the question is set in rather than about: the places after a word of place ("a talk in
# Vienna", "naar Assen of Groningen", "clients from Antwerp"), the visitor's own ("our CTO",
# "onze ERP"), and what comes with a number: a time zone ("14:30 CET"), an address
# ("Keizersgracht 123"), a version or an edition ("Windows 11", "PyCon 2027").
_SETTING = re.compile(rf"(?:\b(?:in|to|naar|near|nabij|around|rond|te|across|throughout|from|uit|our|my|your|onze|"
                      rf"ons|mijn|jullie|uw)|\d\S*)\s+(?:the\s+|de\s+|het\s+)?{_NAMES_RUN}"
                      rf"(?:(?:,\s*|\s*\b(?:or|and|of|en)\s+){_NAMES_RUN})*|(?<![\w'\u2019-]){_NAMES_RUN}\d")
# German writes every noun with a capital: its capitals are no names
_GERMAN = WORDS.words("names.function_words", ("de",))
# how people are addressed, not what is asked about ("Ms Visser", "mevr. Bakker")
_TITLES = WORDS.words("names.titles")
# dates in other words than the months': short forms and the holidays that name a time of year
_CALENDAR = frozenset().union(*(shared().words(f"calendar.{key}") for key in (
    "months", "months_short", "days", "days_short", "holidays")))


@dataclass(frozen=True)
class Vocabulary:
    """What the knowledge base writes: every word, and each part of a hyphenated one
    ("ABB-robots" holds "abb"), with their stems, and the words by their first three letters."""

    words: frozenset[str]
    stems: frozenset[str]
    by_start: dict[str, tuple[str, ...]]

    @classmethod
    def read(cls, texts: list[str]) -> Vocabulary:
        found = {w for text in texts for w in words_of_text(text)}
        found |= {part for w in found if "-" in w for part in w.split("-") if part}
        by_start: dict[str, list[str]] = {}
        for word in found:
            by_start.setdefault(word[:3], []).append(word)
        return cls(frozenset(found), frozenset(stem(w) for w in found),
                   {start: tuple(words) for start, words in by_start.items()})

    def knows(self, name: str, *, acronym: bool = False) -> bool:
        """Whether it writes ``name`` in some form: the word itself, an inflection or a derived
        word ("Kubernetes'", "Grafana's"), for a compound its first part ("Siemens-besturingen":
        "siemens"), for an acronym a word it ends or starts ("SQL" in "PostgreSQL"). Not a word
        that only ends the name: "SharePoint" is not "point"."""
        for form in {name, name.split("-", maxsplit=1)[0]}:
            if form in self.words or stem(form) in self.stems:
                return True
            if len(form) >= 6 and any(same_word(form, w) for w in self.by_start.get(form[:3], ())):
                return True
        return acronym and len(name) >= 3 and any(w != name and (w.endswith(name) or w.startswith(name))
                                                  for w in self.words)


def unknown_name(question: str, vocabulary: Vocabulary, owner: str) -> str | None:
    """The first name a question asks about that the knowledge base never writes in any form, as
    the visitor wrote it; None when there is none. No sentence states a fact about it ("Has she
    used MongoDB?", "Programmeert hij ook ABB-robots?"), so the nearest sentence about something
    else must not answer it.

    A name is a word of three letters or more written with a capital inside the question's own
    sentence, after the last colon (what comes before is a preamble: "Vraagje van Sanne: ...").
    Not a name: the names after an introduction ("I'm Jan from Acme"), what ``_SETTING`` reads
    as the setting, what the visitor quotes, a month, a day or a holiday, a title ("Ms"), the
    owner's name, a word with digits. A language or country the base writes in its other
    language ("German" for "Duits", "Engelstalig" for "English") is known
    (``text.counterparts``). A question with capitalised function words (Title Case), in
    capitals throughout, or in German (which capitalises every noun) shows no names; a message
    without a question mark is read only when it is short and holds no digits or address, and
    question sentences longer than ``_LONGEST`` characters not at all (a pasted text)."""
    sentences = [re.split(r":\s", s.strip())[-1] for s in _QUESTION_SENTENCE.findall(_QUOTED.sub(" ", question))]
    if not sentences and len(question.split()) <= _SHORT and not re.search(r"[\d@]", question):
        sentences = [question.strip()]
    asked = " ".join(f"{_INTRODUCTION.sub(' ', s).strip()}." for s in sentences)
    if len(asked) > _LONGEST:
        return None  # no question of a visitor's: a pasted text
    written = NAMED.findall(asked)
    inner = NAMED.findall(SENTENCE_START.sub(" ", asked))
    titled = sum(1 for w in inner if w[0].isupper() and not is_name(w))
    capitals = sum(1 for w in inner if w[0].isupper())
    if (titled >= 2 or (titled and 2 * capitals > len(inner)) or asked == asked.upper()
            or any(w.lower() in _GERMAN for w in written)):
        return None
    owner_words = set(name_words(owner))
    inside = _SETTING.sub(" ", SENTENCE_START.sub(" ", asked))
    checked = 0
    for match in re.findall(r"(?<=[\s(\"'])[A-Z][\w'\u2019-]*", f" {inside}"):
        spelled = match.strip("'-").removesuffix("'s").removesuffix("\u2019s")
        word = next(iter(words_of_text(spelled)), "")
        if (len(word) < 3 or any(c.isdigit() for c in word) or word.startswith("i'") or not is_name(spelled)
                or word in owner_words or word in _CALENDAR or word in _TITLES):
            continue
        checked += 1
        if checked > _MAX_NAMES:
            return None
        acronym = spelled.isupper()
        if not any(vocabulary.knows(form, acronym=acronym) for form in counterparts(word)):
            return spelled
    return None

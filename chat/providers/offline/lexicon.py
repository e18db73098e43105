"""The words and patterns the offline twin reads questions and sentences with, in both languages:
the kinds of fact a question asks for and the evidence of each in a sentence, what a "how much"
measures, the words too general or too weak to say what a question is about."""

from __future__ import annotations

import re
from pathlib import Path

from text.lexicon import Lexicon, shared
from text.numbers import MONEY

WORDS = Lexicon(Path(__file__).resolve().parent / "data")
_SHARED = shared()
_MONTHS = _SHARED.alternation("calendar.months", "calendar.days")
_NUMBER_WORDS = _SHARED.alternation("numbers.words")
_CAPITALISED_MONTHS = "(?:" + "|".join(sorted(w.capitalize() for w in _SHARED.words("calendar.months")
                                              | _SHARED.words("calendar.days"))) + ")"
_EVIDENCE = {
    "when": re.compile(rf"\b(?:19|20)\d\d\b|\b{_MONTHS}\b|\b{WORDS.alternation('evidence.since')}\s+\d",
                       re.IGNORECASE),
    "quantity": re.compile(rf"\d|\b{_NUMBER_WORDS}\b|%|€|\$", re.IGNORECASE),
    # a name after a word of place ("in Leiden", "at Brightwater", "aan de TU Delft"), or an institution
    "where": re.compile(rf"\b{WORDS.alternation('evidence.place_words')}\s+"
                        rf"(?:{WORDS.alternation('evidence.articles')}\s+)?(?!{_CAPITALISED_MONTHS}\b)[A-Z][\w-]+|"
                        rf"\b{WORDS.alternation('evidence.institutions')}\b"),
    # a capitalised word, not the sentence's first: a name, where ``text.names.is_name`` says so
    "who": re.compile(r"(?<=\s)[A-Z][\w-]*"),
    # a reason: "because", "so that", or an explanation after a colon
    "why": re.compile(rf"\b{WORDS.alternation('evidence.because')}\b|:", re.IGNORECASE),
}
_KINDS = [(kind, re.compile(rf"\b{WORDS.alternation(f'kinds.{kind}')}\b", re.IGNORECASE))
          for kind in ("when", "quantity", "why", "who", "where")]
# What a "how much / how long" question measures: a duration wants a number of hours, days or
# years (or a start: "since 2019", "2019 - present", a year), a price an amount of money, a
# weight a number of kilos. Any number is not an answer: "How long was the site down?" is not
# answered by "9,000 requests an hour". "How long" may ask a length too ("How long is the bridge?").
_UNITS = _SHARED.alternation("units.time")
_MEASURES = [
    ("duration", re.compile(r"\b(?:how long|hoe lang|how many (?:hours|days|weeks|months|years|minutes)|hoeveel "
                            r"(?:uur|uren|dagen|werkdagen|weken|maanden|jaar|jaren|minuten))\b", re.IGNORECASE)),
    # "What does a keynote cost?", "How much are her fees?", "Wat rekent hij per uur?"; not "How
    # much did the error rate drop?" nor "Wat vraagt de klant?"
    ("money", re.compile(r"\b(?:how much (?:(?:does|do|did|is|are|will|would|was|were)\b.*\b(?:costs?|charges?|fees?|"
                         r"prices?|(?:hourly|day|daily) rates?)|money)|how expensive|what (?:does|do|did|would|will) "
                         r"(?:[\w'-]+ ){1,4}(?:cost|charge|pay|earn)|how much (?:does|do|did|would|will) (?:[\w'-]+ )"
                         r"{1,4}(?:pay|earn)|(?:how much|what) (?:is|was|are|were) (?:[\w'-]+ ){1,3}paid|"
                         r"hoeveel (?:kost|kosten|kostte|geld)|wat (?:kost|kosten|kostte)|"
                         r"(?:hoeveel|wat) (?:rekent|vraagt|vragen|rekenen) (?:ze|zij|hij|je|jij|u)|hoe duur|"
                         # paying and earning are money too: "Wat betaalde de bakkerij?", "Hoeveel verdient ze?"
                         r"(?:hoeveel|wat) (?:betaal|betaalt|betaalde|betaalden|betalen|verdien|verdient|verdiende|"
                         r"verdienen))"
                         # but attention is paid and preference deserved ("verdient de voorkeur"), not money
                         r"\b(?!.*\b(?:attention|a living|voorkeur|aandacht)\b)", re.IGNORECASE)),
    ("weight", re.compile(r"\b(?:how heavy|how much (?:does|do|did) (?:[\w'-]+ ){1,4}weigh|hoe zwaar|hoeveel "
                          r"(?:weegt|woog|wegen))\b", re.IGNORECASE)),
]
_NUMBER = rf"(?:\d[\d.,]*|\b(?:{_NUMBER_WORDS}|anderhalf|several|enkele))"
_LENGTH = re.compile(r"\d[\d.,]*\s*-?\s*(?:km|kilomet(?:er|re)s?|miles?|m|met(?:er|re)s?)\b", re.IGNORECASE)
_MEASURE_EVIDENCE = {
    "duration": re.compile(rf"{_NUMBER}\s*-?\s*{_UNITS}\b|\b(?:19|20)\d\d\b", re.IGNORECASE),
    "money": MONEY,
    "weight": re.compile(r"\d[\d.,]*\s*(?:kg|kilos?|kilograms?|kilogrammes?|grams?|gram|tons?|tonnes?|ton|lbs?)\b",
                         re.IGNORECASE),
}
# Dutch "waar" is "where" unless it ends in a preposition: "Waar spreekt ze over?" asks what about.
_WAAR = re.compile(rf"\bwaar\b(?!.*\b{WORDS.alternation('asks.waar_prepositions')}\s*\??\s*$)", re.IGNORECASE)
_DEFINE = re.compile(r"^\s*(?:what|who) (?:is|are|was|were) (?!(?:her|his|their|she|he|it)\b|[\w-]+['\u2019]s\b)|"
                     r"\b(?:tell me (?:more )?about|what (?:does|did) \w+ do\b)|^\s*(?:wat|wie) (?:is|zijn|was) "
                     r"(?!(?:haar|zijn|hun|ze|hij)\b)|\bvertel\b|^\s*wat voor\b", re.IGNORECASE)
_FRAME_WORDS = {kind: WORDS.words(f"frame.{kind}") for kind in ("when", "where", "quantity")}
_WEAK_WORDS = WORDS.words("words.weak")
# Words too general to say what a question is about, or to justify quoting a second sentence.
_GENERAL_WORDS = _WEAK_WORDS | WORDS.words("words.general")
# A sentence that speaks of the document itself rather than of the owner.
META = re.compile(rf"\b{WORDS.alternation('words.meta')}\b", re.IGNORECASE)
_ANSWER_TYPE = re.compile(rf"\b(?:which|what|welke?|wat voor(?: een)?)\s+"
                          rf"(?!{WORDS.alternation('asks.not_answer_types')}\b)([a-z][\w-]{{2,}})", re.IGNORECASE)
# "How many students ...?": the thing counted, which the number in an answer counts
_COUNTED = re.compile(rf"\b(?:how many|hoeveel)\s+(?!{WORDS.alternation('asks.not_counted')}\b)([^\W\d_][\w-]{{2,}})",
                      re.IGNORECASE)
# a number and the next two words ("81% of students", "62 machines"), not "one of the ..."
_COUNT = re.compile(rf"(?:\d[\d.,]*\s?%?|\b{_NUMBER_WORDS}\b)(?!\s+(?:of|van)\s+(?:the|de|het|"
                    r"them|hen|those|these|die|deze)\b)((?:\s+[^\W\d_][\w'-]*){1,2})", re.IGNORECASE)


# "besides English", "andere talen dan Engels": the languages asked for are the others
_BESIDES = re.compile(rf"\b{WORDS.alternation('words.besides')}\b(?P<rest>(?:\W+\w+){{1,4}})", re.IGNORECASE)


# Words that place what is asked before or after something else ("What did she do before that?"):
# a question of nothing else asks about one time, which its own words do not say.
THEN = re.compile(rf"\b{WORDS.alternation('words.then')}\b", re.IGNORECASE)
# Phrases that place a question in time and name nothing ("de laatste tijd" is "lately").
_TIME_PHRASES = re.compile(rf"\b{WORDS.alternation('words.time_phrases')}\b", re.IGNORECASE)

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

import re
from dataclasses import dataclass, field
from datetime import date

from chat.providers.offline.dense import nearest as dense_nearest
from chat.providers.offline.dense import similarities as dense_similarities
from chat.providers.offline.sentences import split_sentences
from knowledge.translation import translated
from text import topics
from text.counterparts import counterparts, is_language
from text.language import detect_language

_MONTHS = (
    "january february march april may june july august september october november december "
    "januari februari maart mei juni juli augustus oktober "
    "monday tuesday wednesday thursday friday saturday sunday "
    "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag"
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred "
    "hundreds thousand thousands million dozen half twice "
    "twee drie vier vijf zes zeven acht negen tien elf twaalf vijftien twintig dertig veertig vijftig honderd "
    "honderden duizend duizenden miljoen dozijn half helft"
)
_EVIDENCE = {
    "when": re.compile(rf"\b(?:19|20)\d\d\b|\b(?:{'|'.join(_MONTHS.split())})\b|\b(?:since|from|until|vanaf|sinds|tot)"
                       r"\s+\d", re.IGNORECASE),
    "quantity": re.compile(rf"\d|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b|%|€|\$", re.IGNORECASE),
    # a name after a word of place ("in Leiden", "at Brightwater", "aan de TU Delft"), or an institution
    "where": re.compile(r"\b(?:in|at|from|near|to|of|bij|aan|uit|te|naar|van|op)\s+(?:the\s+|de\s+|het\s+)?"
                        r"(?!(?:" + "|".join(m.capitalize() for m in _MONTHS.split()) + r")\b)[A-Z][\w-]+|"
                        r"\b(?:university|universiteit|hogeschool|college|school|city|stad|gemeente|province|provincie|"
                        r"country|land)\b"),
    "who": re.compile(r"(?<=\s)[A-Z][\w-]*[a-z][\w-]*"),  # a name, not the sentence's first word
    # a reason: "because", "so that", or an explanation after a colon
    "why": re.compile(r"\b(?:because|so that|therefore|as a result|which is why|the reason|omdat|want|zodat|"
                      r"doordat|daarom|de reden)\b|:", re.IGNORECASE),
}
_KINDS = [
    ("when", re.compile(r"\b(?:when|what year|which year|since when|how soon|wanneer|"
                        r"(?:in|sinds|vanaf|tot) welk jaar|sinds wanneer|vanaf wanneer|per wanneer|"
                        r"(?:next|this|coming) (?:week|month|year|quarter|spring|summer|"
                        r"autumn|winter)|volgende (?:week|maand)|volgend jaar|binnenkort|soon)\b", re.IGNORECASE)),
    ("quantity", re.compile(r"\b(?:how (?:many|much|big|large|long|old|fast|often|accurate|popular|far|good|well)|"
                            r"what (?:percentage|share|number|age|level)|hoeveel|welke leeftijd|hoe (?:groot|lang|"
                            r"oud|snel|vaak|nauwkeurig|populair|ver|duur|goed))\b", re.IGNORECASE)),
    ("why", re.compile(r"\b(?:why|waarom)\b", re.IGNORECASE)),
    ("who", re.compile(r"\b(?:who|whom|which (?:company|companies|employer|employers|client|clients|organi[sz]ations?)|"
                       r"for whom|wie|voor wie|welke? (?:bedrijf|bedrijven|werkgever|werkgevers|klant|klanten))\b",
                       re.IGNORECASE)),
    ("where", re.compile(r"\b(?:where|which (?:city|country|town|university|school|place)|welke? (?:stad|land|plaats|"
                         r"universiteit|school))\b", re.IGNORECASE)),
]
# What a "how much / how long" question measures: a duration wants a number of hours, days or
# years (or a start: "since 2019", "2019 - present", a year), a price an amount of money, a
# weight a number of kilos. Any number is not an answer: "How long was the line down?" is not
# answered by "9,000 loaves an hour". "How long" may ask a length too ("How long is the bridge?").
_UNITS = (r"seconds?|secs?|minutes?|mins?|hours?|hrs?|(?:working |business )?days?|weeks?|months?|years?|"
          r"seconden|minuut|minuten|uur|uren|dag|dagen|werkdagen|week|weken|maand|maanden|jaar|jaren|jr")
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
_NUMBER = rf"(?:\d[\d.,]*|\b(?:{'|'.join(_NUMBER_WORDS.split())}|anderhalf|several|enkele))"
_LENGTH = re.compile(r"\d[\d.,]*\s*-?\s*(?:km|kilomet(?:er|re)s?|miles?|m|met(?:er|re)s?)\b", re.IGNORECASE)
_MEASURE_EVIDENCE = {
    "duration": re.compile(rf"{_NUMBER}\s*-?\s*(?:{_UNITS})\b|\b(?:19|20)\d\d\b", re.IGNORECASE),
    "money": re.compile(r"[€$£]\s*\d|\d[\d.,]*(?:,-)?\s*(?:k|duizend|thousand|million|miljoen|mln|billion|miljard)?"
                        r"\s*(?:euros?|eur|dollars?|usd|gbp|chf|pounds?)\b|\b(?:euros?|eur|usd|gbp|chf)\s*\d",
                        re.IGNORECASE),
    "weight": re.compile(r"\d[\d.,]*\s*(?:kg|kilos?|kilograms?|kilogrammes?|grams?|gram|tons?|tonnes?|ton|lbs?)\b",
                         re.IGNORECASE),
}
# Dutch "waar" is "where" unless it ends in a preposition: "Waar spreekt ze over?" asks what about.
_WAAR = re.compile(r"\bwaar\b(?!.*\b(?:over|mee|aan|voor|door|van|op|naar|uit|bij|in|toe|om|tegen)\s*\??\s*$)",
                   re.IGNORECASE)
_DEFINE = re.compile(r"^\s*(?:what|who) (?:is|are|was|were) (?!(?:her|his|their|she|he|it)\b|[\w-]+['\u2019]s\b)|"
                     r"\b(?:tell me (?:more )?about|what (?:does|did) \w+ do\b)|^\s*(?:wat|wie) (?:is|zijn|was) "
                     r"(?!(?:haar|zijn|hun|ze|hij)\b)|\bvertel\b|^\s*wat voor\b", re.IGNORECASE)
_FRAME_WORDS = {
    "when": {"year", "years", "date", "month", "week", "day", "time", "next", "soon", "jaar", "datum", "maand",
             "dag", "tijd", "volgende", "volgend", "binnenkort"},
    "where": {"city", "country", "place", "town", "stad", "land", "plaats"},
    "quantity": {"number", "amount", "percentage", "big", "large", "many", "much", "long", "old", "fast", "often",
                 "accurate", "popular", "far", "expensive", "good", "well", "age", "level", "aantal", "hoeveelheid",
                 "groot", "lang", "oud", "snel", "vaak", "nauwkeurig", "populair", "ver", "duur", "goed", "leeftijd"},
}
_WEAK_WORDS = frozenset(
    "use uses used using get gets got make makes made take takes took know knows knew like likes think thinks "
    "gebruikt gebruiken gebruikte maakt maken maakte doet doen deed weet weten vindt vinden "
    "getting going obtain obtained gotten krijgt krijgen kreeg kregen gekregen haalt halen haalde gehaald "
    "behaalt behalen behaalde behaalden behaald "
    # "let" / "laten": having something done ("Laat hij het in de cloud draaien?") names nothing;
    # not "laat" itself, which is also "late" ("Is ze vaak te laat?")
    "let lets letting laten liet lieten gelaten".split()
)
# Words too general to say what a question is about, or to justify quoting a second sentence.
_GENERAL_WORDS = _WEAK_WORDS | frozenset(
    "work works worked working tell call called now currently moment still ever today anything something any "
    "hold holds held give gives gave have has do does did done go goes went come year years "
    "werk werkt werken werkte gewerkt vertel heet noemt nu momenteel nog ooit tegenwoordig eigenlijk iets "
    "gedaan geeft geven gaf heeft hebben doet doen deed gaat gaan ging gingen gegaan jaar jaren "
    # words that place a question in time or against something else, but name nothing
    "other another others new recent recently lately andere ander anders nieuw nieuwe onlangs recent "
    "laatst "
    # asking for examples names none: "Kun je een paar voorbeelden noemen van klanten ...?"
    "example examples mention voorbeeld voorbeelden noem noemen "
    # coming and going say how, not what ("Zijn reiskosten inbegrepen of komen die erbij?" is not
    # answered by "Daarna kom ik kijken")
    "come comes came coming komen komt kwam kwamen gekomen "
    # "just", "simply": how, not what ("Kun je het niet gewoon automatisch laten doen?")
    "simply gewoon simpelweg "
    # "weer" is "again" here (and "weather", which no owner's page answers either)
    "weer".split()
)
# A sentence that speaks of the document itself rather than of the owner.
META = re.compile(r"\b(?:this|these) (?:cv|page|pages|document|article|overview|section|site)\b|\ban overview of\b|"
                   r"\ban article by\b|\bdeze (?:pagina|tekst|cv|sectie)\b|\been overzicht van\b|"
                   r"\bin het (?:nederlands|engels)\b", re.IGNORECASE)
_ANSWER_TYPE = re.compile(r"\b(?:which|what|welke?|wat voor(?: een)?)\s+(?!(?:is|are|was|were|does|did|do|has|have|"
                          r"kind|sort|type|zijn|heeft|doet|soort)\b)([a-z][\w-]{2,})", re.IGNORECASE)
# "How many students ...?": the thing counted, which the number in an answer counts
_COUNTED = re.compile(r"\b(?:how many|hoeveel)\s+(?!(?:of|van|de|het|the|times|keer|keren|is|are|was|were|do|does|"
                      r"did|has|have|had|will|would|can|could|heeft|hebben|zijn|kost|kosten|een|a|an|"
                      r"zal|zou|kan|kun)\b)([^\W\d_][\w-]{2,})", re.IGNORECASE)
# a number and the next two words ("81% of students", "62 machines"), not "one of the ..."
_COUNT = re.compile(rf"(?:\d[\d.,]*\s?%?|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b)(?!\s+(?:of|van)\s+(?:the|de|het|"
                    r"them|hen|those|these|die|deze)\b)((?:\s+[^\W\d_][\w'-]*){1,2})", re.IGNORECASE)


# "besides English", "andere talen dan Engels": the languages asked for are the others
_BESIDES = re.compile(r"\b(?:besides|other|others|apart from|except|beyond|naast|behalve|buiten|andere|anders)\b"
                      r"(?P<rest>(?:\W+\w+){1,4})", re.IGNORECASE)


# Words that place what is asked before or after something else ("What did she do before that?"):
# a question of nothing else asks about one time, which its own words do not say.
THEN = re.compile(r"\b(?:before|after|earlier|previously|afterwards|daarvoor|hiervoor|daarna|hierna|ervoor|erna|"
                  r"eerder|vroeger|toen)\b", re.IGNORECASE)
# Phrases that place a question in time and name nothing ("de laatste tijd" is "lately").
_TIME_PHRASES = re.compile(r"\b(?:de laatste tijd|op dit moment|op het moment|these days|at the moment|"
                           r"at present|right now|for now)\b", re.IGNORECASE)


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
_QUOTED = re.compile(r"(?<!\w)['\"\u2018\u201c][^'\"\u2019\u201d\n]*['\"\u2019\u201d](?!\w)")
# What the question is set in rather than about: the places after a word of place ("a talk in
# Vienna", "naar Assen of Groningen", "clients from Antwerp"), the visitor's own ("our CTO",
# "onze ERP"), and what comes with a number: a time zone ("14:30 CET"), an address
# ("Keizersgracht 123"), a version or an edition ("Windows 11", "PyCon 2027").
_SETTING = re.compile(rf"(?:\b(?:in|to|naar|near|nabij|around|rond|te|across|throughout|from|uit|our|my|your|onze|"
                      rf"ons|mijn|jullie|uw)|\d\S*)\s+(?:the\s+|de\s+|het\s+)?{_NAMES_RUN}"
                      rf"(?:(?:,\s*|\s*\b(?:or|and|of|en)\s+){_NAMES_RUN})*|(?<![\w'\u2019-]){_NAMES_RUN}\d")
# German writes every noun with a capital: its capitals are no names
_GERMAN = frozenset("ist sie und nicht für auch oder einen einer eines unser unsere sich wäre würde kann können "
                    "ich wir ihr ihre ihren mein meine bei guten uhr".split())
# how people are addressed, not what is asked about ("Ms Visser", "mevr. Bakker")
_TITLES = frozenset("mr mrs ms miss dr prof sir madam dhr mevr mevrouw meneer heer drs".split())
# dates in other words than the months': short forms and the holidays that name a time of year
_CALENDAR = frozenset(_MONTHS.split()) | frozenset(
    "jan feb mar apr jun jul aug sep sept oct nov dec mrt okt mon tue tues wed thu thur thurs fri sat sun "
    "christmas xmas easter whitsun kerst kerstmis pasen pinksteren koningsdag".split())


@dataclass(frozen=True)
class Vocabulary:
    """What the knowledge base writes: every word, and each part of a hyphenated one
    ("ABB-robots" holds "abb"), with their stems, and the words by their first three letters."""

    words: frozenset[str]
    stems: frozenset[str]
    by_start: dict[str, tuple[str, ...]]

    @classmethod
    def read(cls, texts: list[str]) -> Vocabulary:
        found = {w for text in texts for w in topics.words(text)}
        found |= {part for w in found if "-" in w for part in w.split("-") if part}
        by_start: dict[str, list[str]] = {}
        for word in found:
            by_start.setdefault(word[:3], []).append(word)
        return cls(frozenset(found), frozenset(topics.stem(w) for w in found),
                   {start: tuple(words) for start, words in by_start.items()})

    def knows(self, name: str, *, acronym: bool = False) -> bool:
        """Whether it writes ``name`` in some form: the word itself, an inflection or a derived
        word ("Kubernetes'", "Grafana's"), for a compound its first part ("Siemens-besturingen":
        "siemens"), for an acronym a word it ends or starts ("SQL" in "PostgreSQL"). Not a word
        that only ends the name: "SharePoint" is not "point"."""
        for form in {name, name.split("-", maxsplit=1)[0]}:
            if form in self.words or topics.stem(form) in self.stems:
                return True
            if len(form) >= 6 and any(topics.same_word(form, w) for w in self.by_start.get(form[:3], ())):
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
    written = re.findall(r"[^\W\d_][\w'-]*", asked)
    inner = re.findall(r"[^\W\d_][\w'-]*", topics.SENTENCE_START.sub(" ", asked))
    titled = sum(1 for w in inner if w[0].isupper() and w.lower() in topics.STOP_WORDS)
    capitals = sum(1 for w in inner if w[0].isupper())
    if (titled >= 2 or (titled and 2 * capitals > len(inner)) or asked == asked.upper()
            or any(w.lower() in _GERMAN for w in written)):
        return None
    owner_words = set(topics.name_words(owner))
    inside = _SETTING.sub(" ", topics.SENTENCE_START.sub(" ", asked))
    checked = 0
    for match in re.findall(r"(?<=[\s(\"'])[A-Z][\w'\u2019-]*", f" {inside}"):
        spelled = match.strip("'-").removesuffix("'s").removesuffix("\u2019s")
        word = next(iter(topics.words(spelled)), "")
        if (len(word) < 3 or any(c.isdigit() for c in word) or word.startswith("i'") or word in topics.STOP_WORDS
                or word in owner_words or word in _CALENDAR or word in _TITLES):
            continue
        checked += 1
        if checked > _MAX_NAMES:
            return None
        acronym = spelled.isupper()
        if not any(vocabulary.knows(form, acronym=acronym) for form in counterparts(word)):
            return spelled
    return None


@dataclass
class Passage:
    title: str
    heading: str
    text: str
    rank: int  # position in the tool's results: the retriever's own judgement
    on_topic: bool = False  # chosen for the question's subject (availability), not by a search


@dataclass
class Quote:
    title: str
    heading: str
    sentences: list[str]


@dataclass
class _Scored:
    score: float
    linked: bool  # shares a word or the topic with the question, or holds the fact asked for
    passage: int
    index: int
    sentence: str
    covers: frozenset[str]  # the question's words it (or its passage's title and heading) contains
    in_language: bool
    meaning: float = 0.0  # the model's similarity to the question (dense.similarities): breaks ties
    possible: bool = True  # False: it lacks what the question pins down (an amount, a year), whatever else it holds


def question_kind(question: str) -> str | None:
    """``when``, ``quantity``, ``why``, ``who``, ``where`` or None. The kind asked first wins:
    "How many machines did he ship when he worked in Hengelo?" asks a number, its "when" only
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


def _matches(wanted: list[str], found: list[str]) -> int:
    """How many of ``wanted`` appear in ``found`` in some form."""
    return sum(1 for w in wanted if any(topics.same_word(w, f) for f in found))


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
    subjects: frozenset[str] = frozenset()  # the names it uses that name a document's subject ("Marram")
    present: bool = False  # asked of now ("Which university does she work for?"), not of her past
    # its names of languages and countries, with their forms in either language
    # (text.counterparts: "german": "german", "duits"), written with a capital or with speaking
    listed: dict[str, frozenset[str]] = field(default_factory=dict)
    languages: frozenset[str] = frozenset()  # the languages it asks whether the owner speaks ("German")
    ambiguous: frozenset[str] = frozenset()  # its triggers that name no topic alone ("languages", "speak")


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
    database"), 0.75 when it speaks of the question's topic (text.topics), 1.5 when it holds
    the kind of fact asked for, 1 for each name the question uses that its passage holds (0.5 more
    when the sentence says it), up to 1 when its passage's title or heading names what was asked,
    a little for the retriever's rank and for the visitor's language; it loses 0.75 when it opens
    a document (unless the question asks what something is) and 2 when it speaks of the document
    itself ("This CV lists ..."). A word the passage's title or heading names already, or a verb
    that says little ("use"), counts half. A second sentence is quoted only when it adds one of the
    question's words the first lacks (scoring at least half the first), or when the question asks
    for a description (at least 0.75), or when it scores nearly as well as the first (``_TIE``:
    which of the two answers is not for the scores to tell). Only sentences that speak of what
    was asked (``_linked``) are quoted at all. ``subjects``: the words of the knowledge base's
    document titles; a question that names one ("What did Marram cost to make?") is about that
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
    heading = topics.content_words(passage.heading.rsplit(">", 1)[-1])
    # "Which languages does he speak?" and "Talen": the heading names the topic that is the kind
    # asked for (see _context)
    return any(topics.same_word(asks.answer_type, word) for word in heading) or (
        asks.answer_type in asks.ambiguous and _names_topic(asks, heading))


def _names_topic(asks: _Question, words: list[str]) -> bool:
    """Whether ``words`` (a title or heading) name the question's topic by one of the topic's own
    words: "Talen" for "Which languages does he speak?"; not "Programmeertalen" (a compound of
    one: a kind of it) nor "Programming languages" (by the question's own ambiguous word)."""
    own = set(asks.topic_words)
    return any(word in own and not any(topics.same_word(a, word) for a in asks.ambiguous) for word in words)


def _read_question(question: str, passages: list[Passage], owner: str,
                   subjects: frozenset[str] = frozenset()) -> _Question:
    owner_words = set(topics.words(owner))
    measure = question_measure(question)
    kind = question_kind(question) or ("quantity" if measure else None)
    # words of a phrase such as "spare time" are the topic's, not words to find one by one, and
    # "year" in "which year" is the kind of answer, not a word of it
    frame = topics.phrase_words(question) | (_FRAME_WORDS.get(kind, set()) if kind else set())
    asked = [w for w in dict.fromkeys(topics.content_words(_TIME_PHRASES.sub(" ", question)))
             if w not in owner_words and w not in frame]
    # "Is she around right now?", "Wat deed ze hiervoor?" ask something, if not what: not about her in general
    timed = bool(_TIME_PHRASES.search(question) or THEN.search(question))
    topic_words = sorted(topics.topic_words(topics.topics_of(question)) - set(asked))
    naming = topics.naming_words(question)
    # "Spanish", or "spanish" asked with speaking ("does he speak spanish?"); not "fries" or "pools"
    named = topics.listed_names(question)
    listed = {w: forms for w in asked if w in named and len(forms := counterparts(w)) > 1}
    # names: capitalised in the question, or the name of a retrieved document ("floodmap-cli")
    titles = {w for passage in passages for w in topics.content_words(passage.title)}
    written = topics.names(question) - owner_words
    names = written | ({w for w in asked if w in titles} - owner_words)
    # "Which database ...?": a sentence that names a database answers it
    typed = _ANSWER_TYPE.search(question)
    # the names a "besides" leaves out ("besides English", "andere talen dan Engels"): the others are asked
    besides = {w for match in _BESIDES.finditer(question) for w in topics.words(match.group("rest"))}
    return _Question(
        owner_words=owner_words, kind=kind, measure=measure, asked=asked, topic_words=topic_words, names=names,
        focus={w for w in asked if w not in names and w not in _GENERAL_WORDS and w not in naming},
        triggers={w for w in asked if w in naming}, defines=bool(_DEFINE.search(question)),
        ambiguous=frozenset(w for w in asked if w in naming and not topics.topics_of(w)),
        # "In which city ...?": the kind of fact asked for (a place) says it already
        answer_type=typed.group(1).lower() if typed and typed.group(1).lower() not in frame | topics.STOP_WORDS
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


def _context(asks: _Question, index: int, passage: Passage, lang: str) -> _Context:
    """A passage's share of each sentence's score: the names it holds, a title or heading that
    names what was asked, the retriever's rank and the visitor's language."""
    context = topics.content_words(f"{passage.title} {passage.heading}")
    covers = {w for w in asks.asked if any(topics.same_word(w, c) for c in context)}
    context_bonus = 0.5 * min(len(covers) + (1 if _matches(asks.topic_words, context) else 0), 2)
    # a name counts for the passage that holds it (in its title or anywhere in its text), once
    everywhere = context + topics.content_words(passage.text)
    named = {w for w in asks.names if w in asks.asked and any(topics.same_word(w, f) for f in everywhere)}
    in_language = detect_language(passage.text) == lang
    bonus = min(len(named), 2) + context_bonus + (0.3 if in_language else 0.0) + 0.4 / (1 + passage.rank)
    # read only when the question names a year: most do not
    years = _years(f"{passage.title} {passage.heading} {passage.text}") if asks.years else frozenset()
    subjects = any(topics.same_word(w, f) for w in asks.subjects for f in everywhere)
    # "Which languages does he speak?" and the heading "Talen": a kind that names its topic only
    # with the question's other words is that topic, so a heading that names the topic names it
    # ("Which sport ...?" asks for less than a heading "Outside work" names)
    names_kind = asks.answer_type in asks.ambiguous and _names_topic(asks, context)
    return _Context(index, passage, covers, named, bonus, in_language, years, subjects, names_kind)


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
        found = [w for w in topics.content_words(sentence) if w not in asks.owner_words]
        own_words = {w for w in asks.asked if any(topics.same_word(w, f) for f in found)}
        if asks.listed:  # "Duits" says "German"
            listed = [counterparts(f) for f in topics.capitalised(sentence)]
            own_words |= {w for w, forms in asks.listed.items() if any(forms & other for other in listed)}
        # a word that names nothing ("jaar", "go") translates nothing worth finding ("annual salary")
        unfound = [w for w in asks.asked if w not in own_words and w not in _GENERAL_WORDS]
        covers = own_words | (translated(unfound, [f for f in found if f not in _GENERAL_WORDS])
                              if not ctx.in_language else set())
        # the topic in other words than the question's ("cat" for "pets"), or the language
        # asked about ("Duits" for "Does he speak German?")
        on_topic = [f for f in found if any(topics.same_word(t, f) for t in asks.topic_words)]
        related = bool(on_topic) or bool(own_words & asks.languages)
        # a kind asked for that names the topic only with the question's other words ("Which
        # languages does he speak?": a programming language?) is found twice only on the topic
        # ("The controllers, software and languages ..." is on the topic by that word alone)
        confirmed = ctx.names_kind or any(not any(topics.same_word(a, f) for a in asks.ambiguous) for f in on_topic)
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
        linked = asks.about_owner or _linked(
            # a name counts where the sentence or its title or heading says it: a number anywhere in
            # a passage that mentions the name elsewhere is not about it
            asks.focus, asks.names, covers, context_covers, related=related, evidence=evidence,
            defines=asks.defines, on_topic=ctx.passage.on_topic, asks_topic=asks.answer_type in asks.triggers,
            kind=asks.kind, triggers=asks.triggers, own_words=own_words,
            # "What grade did she get for her PhD?": the PhD and the topic (education), but no grade
            typed=not asks.answer_type or asks.answer_type in covers | context_covers,
        ) or (sentence == nearest and evidence and bool(covers | context_covers))
        # "Does he speak Spanish?" is not answered by the other languages he speaks
        linked = linked and (not asks.languages or bool(own_words & asks.languages))
        # what can never answer: no amount for "what does it cost", a passage that names no year of
        # "What will a keynote cost in 2028?"
        # the rates page does not say what "the Marram typeface" cost, unless it names Marram
        possible = (not (asks.measure and not evidence) and asks.years <= ctx.years
                    and not (ctx.passage.on_topic and asks.subjects and not ctx.subjects))
        scored.append(_Scored(score, linked and possible, ctx.index, i, sentence, frozenset(covers | context_covers),
                              ctx.in_language, (meaning or {}).get(sentence, 0.0), possible))
    return scored


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_MODEL = re.compile(r"[\w-]*(?:[^\W\d_][\w-]*\d|\d[\w-]*[^\W\d_])[\w-]*")


def _holds_evidence(kind: str | None, sentence: str, measure: str | None = None) -> bool:
    """Whether a sentence holds the kind of fact asked for. A year is a date, not a count: "how
    many" is not answered by "since 2019"."""
    if measure:  # whatever else the question asks ("When ..., and what does it cost?")
        return bool(_MEASURE_EVIDENCE[measure].search(sentence)
                    or (measure == "duration" and _LENGTH.search(sentence)))
    if not kind:
        return False
    if kind == "quantity":
        # nor is the digit of a model's name ("S5", "S7-1500") a count
        sentence = _YEAR.sub(" ", _MODEL.sub(" ", sentence))
    return bool(_EVIDENCE[kind].search(sentence))


# A year the question asks about: "in 2028", "since 2019", "in March 2028"; not "2000 visitors"
_ASKED_YEAR = re.compile(r"\b(?:in|since|from|until|till|by|before|after|during|of|for|tot|sinds|vanaf|voor|na|per|"
                         r"rond|around|tijdens|van)\s+(?:[a-z]+\s+)?((?:19|20)\d\d)\b(?!\s*(?:euros?|eur|€|%))",
                         re.IGNORECASE)
_RANGE = re.compile(r"\b((?:19|20)\d\d)\s*(?:[\u2013\u2014-]|to|tot|until)\s*"
                    r"((?:19|20)\d\d|present|now|today|heden|nu)\b", re.IGNORECASE)


# A question asked in the present tense, and one that asks about the past: "Which university
# does she work for?" asks about now; "Which university did she go to?", "Where has he worked?",
# "Waar werkte ze vroeger?" do not.
_PRESENT = re.compile(r"\b(?:do|does|is|are|am|now|currently|nowadays|these days|doet|doen|werkt|werken|woont|wonen|"
                      r"zit|nu|momenteel|tegenwoordig|inmiddels)\b", re.IGNORECASE)
# (besides the words of THEN: "before", "vroeger", ...)
_PAST = re.compile(r"\b(?:did|was|were|had|has|have|used to|ago|formerly|first|ever|once|"
                   r"deed|deden|waren|hadden|heeft|hebben|ooit|"
                   # a past form ("worked", "werkte", "studeerden"); the words this also catches
                   # ("need", "date") only leave a question unread as present, as before
                   r"[a-z]+(?:ed|de|te|den|ten))\b", re.IGNORECASE)
# a start that still holds ("since 2019", "vanaf maart 2020"); "from 2019 to 2021" and "until
# 2019" ended
_SINCE = re.compile(r"\b(?:since|sinds|vanaf|from)\s+(?:[a-z]+\s+)?(?:19|20)\d\d\b"
                    r"(?!\s*(?:[\u2013\u2014-]|to\b|tot\b|until\b)\s*(?:[a-z]+\s+)?(?:19|20)\d\d)", re.IGNORECASE)


def _past_only(sentence: str) -> bool:
    """Whether a sentence dates what it says, and only before this year ("MSc Hydrology, Delta
    University, 2013"; not "2021 - present", "since 2019" or an undated sentence)."""
    years = _years(sentence)
    return bool(years) and max(int(y) for y in years) < date.today().year and not _SINCE.search(sentence)


def _years(text: str) -> frozenset[str]:
    """The years a text names, the years inside its ranges included ("2019-2021" names 2020,
    "2019 - present" every year since; en dashes too)."""
    years = set(_YEAR.findall(text))
    for start, end in _RANGE.findall(text):
        last = int(end) if end.isdigit() else date.today().year
        years.update(str(y) for y in range(int(start), min(last, int(start) + 100) + 1))
    return frozenset(years)


def _counts(counted: str, sentence: str, *, translate: bool) -> bool:
    """Whether a number in ``sentence`` counts the thing asked about: "81% of students" for "How
    many students ...?", not "twelve minutes". The next few words after the number are read."""
    if not counted:
        return False
    following = [w for match in _COUNT.finditer(sentence) for w in topics.content_words(match.group(1))]
    if any(topics.same_word(counted, w) for w in following):
        return True
    return translate and bool(following) and bool(translated([counted], following))


def _best_first(item: _Scored) -> tuple[float, float, int, int]:
    """Highest score first; of sentences that score the same (the same words found, in the same
    passage), the one nearest the question in meaning, not the one that comes first."""
    return -round(item.score, 6), -item.meaning, item.passage, item.index


# A second sentence scoring this near the first is quoted with it: the scores cannot tell which
# of the two answers ("Where does she teach?": two places, equally well matched).
_TIE = 0.95


def _pick(ranked: list[_Scored], asks: _Question, limit: int) -> list[_Scored]:
    """The best sentence (in the visitor's language when it says the same), and a second only
    when it adds something (a word the first lacks, or more of a description) or ties with it."""
    best = _in_visitors_language(ranked[0], ranked, asks.owner_words)
    chosen = [best]
    for candidate in ranked:
        if len(chosen) >= limit or candidate.score < 0.5 * best.score:
            break
        if candidate is best or any(_same_fact(c.sentence, candidate.sentence, asks.owner_words) for c in chosen):
            continue
        if best.in_language and not candidate.in_language:
            continue  # no second language for an extra sentence
        adds = {w for w in candidate.covers - best.covers if w not in _GENERAL_WORDS}
        if adds or (asks.defines and candidate.score >= 0.75 * best.score) or candidate.score >= _TIE * best.score:
            chosen.append(candidate)
    return chosen


def _linked(focus: set[str], names: set[str], covers: set[str], context_covers: set[str], *, related: bool,
            evidence: bool, defines: bool, on_topic: bool, asks_topic: bool = False, kind: str | None = None,
            triggers: frozenset[str] | set[str] = frozenset(), own_words: set[str] | None = None,
            typed: bool = True) -> bool:
    """Whether a sentence speaks of what was asked (else it is not quoted, however it scores).

    It must contain one of the question's own words (two of a long question's, one of them may be
    in its title or heading). A question of only names and topics ("Does she hold a Kubernetes
    certification?") needs the name or the topic. A name with the kind of fact asked for ("How
    many cities use Floodmap?": a number) is enough, also in the other language, and so
    is a name for "What is ...?", and a name with the question's topic (``typed``: unless the
    question asks "which X" and the sentence names no X). On the availability pages a word or the
    fact asked for is enough.
    """
    if on_topic and own_words is not None:
        # the availability pages speak of rates and dates throughout: a translated "hourly rate"
        # says nothing of "Will his hourly rate rise next year?"
        covers = own_words
    # in a long question (three words or more besides names and topics) its topic counts as one of
    # them; "Which languages ...?" asks for the topic itself
    in_sentence = len(covers & focus) + (1 if related and (len(focus) >= 3 or asks_topic) else 0)
    # with the fact asked for ("How long was the oven down ...?": "De oven stond 52 uur stil"),
    # one of a long question's words is enough
    if focus and (in_sentence >= 2 or (in_sentence and (len(focus) < 4 or context_covers & focus or evidence))):
        return True
    if len(focus) >= 2 and focus <= context_covers:
        return True  # "What programming languages does he use?" under "Programming languages"
    named = bool((covers | context_covers) & names)
    if not focus and (named or (related and typed) or (covers and evidence)):
        return True  # "Where does he work now?": only general words, so the place must be there too
    if named and (evidence or defines or (related and typed)):
        return True  # "Is he certified in any SCADA product?": the name and the topic (certificates)
    # On the availability pages every sentence is on the subject, so a question's own words must
    # be there, or the fact asked for: a date for "when" that names no other topic (the page's
    # dates say when the owner is free), else a fact in a sentence on the question's topic.
    # "Hoeveel verdient hij per jaar?" is not answered by a day rate, nor "Will his hourly rate
    # rise next year?" by the dates of the agenda.
    if not on_topic:
        return False
    dated = evidence and kind == "when" and not triggers
    return bool(covers & focus) or (not focus and bool(covers)) or dated or (evidence and (not focus or related))


def _weight(word: str, context_covers: set[str]) -> float:
    """A found word's worth: half for a word the passage's title or heading gives already (the
    sentence repeats it, it does not add it) or a verb that says little ("use")."""
    return 0.5 if word in _WEAK_WORDS or word in context_covers else 1.0


def _in_visitors_language(best: _Scored, ranked: list[_Scored], owner_words: set[str]) -> _Scored:
    """The same fact in the visitor's language, when the knowledge base has it and it scores
    nearly as well."""
    if best.in_language:
        return best
    for other in ranked:
        if (other.in_language and other.score >= 0.7 * best.score
                and _same_fact(best.sentence, other.sentence, owner_words)):
            return other
    return best


_MARKS = re.compile(r"\d[\d.,]*\d|\d|(?<=\s)[A-Z][\w-]+")


def _same_fact(a: str, b: str, owner_words: set[str]) -> bool:
    """The same fact twice (often once per language): they share numbers or names (the
    owner's own name does not count)."""
    shared = set(_MARKS.findall(a)) & set(_MARKS.findall(b))
    return len({m for m in shared if m.lower() not in owner_words}) >= 2

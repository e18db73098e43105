"""The topics visitors ask a professional's twin about, in the words of both languages.

A visitor asks "Where did she study?" and the CV says "Education" and "MSc"; a Dutch visitor
asks "Waar woont ze?" and the only answer is the English "She lives in Leiden". Embeddings
bridge some of that, not reliably for short questions. This small, hand-written thesaurus
bridges the rest, and it is the same for every owner: it names kinds of facts (education,
languages spoken, rates), not facts about anyone.

Search adds a matched topic's other words to the full-text query at a lower weight and ranks
sections whose heading names the topic; the offline provider uses the same words to pick the
sentence that answers. Every word is listed as it is written (plural, past tense, Dutch
participle), so matching is plain word equality and easy to explain: the trace shows which
topic a question hit.
"""

from __future__ import annotations

import re
from functools import lru_cache

from text.counterparts import is_language
from text.lexicon import shared
from text.words import words

# A word may appear in more than one topic; ``free_time`` is a phrase ("free time"); ``~language``
# is found through the topic but does not name it ("programming languages" is not about languages
# spoken). Words that name many things ("work", "start", "free", "speak": a talk or a language?,
# "functie": a job or a feature?) are left out: they would drag every question towards one topic.
TOPICS: dict[str, str] = {
    "education": (
        "study studied studies studying student degree degrees diploma diplomas graduate graduated graduating "
        "graduation university universities college education educated school master masters msc bachelor "
        "bachelors bsc phd doctorate thesis alma "
        "studeren studeert studeerde gestudeerd studie opleiding opleidingen universiteit hogeschool "
        "afgestudeerd afstuderen scriptie gepromoveerd promotie"
    ),
    "employment": (
        "employer employers employed employment company companies job jobs career position positions role roles "
        "work_at works_at working_at work_for works_for working_for "
        "werkgever werkgevers bedrijf bedrijven baan banen loopbaan werkervaring werkt_bij werkzaam"
    ),
    "residence": (
        "live lives lived living based located hometown reside resides residence "
        "woont wonen woonde woonplaats gevestigd"
    ),
    "pets": (
        "pet pets cat cats kitten dog dogs puppy animal animals "
        "huisdier huisdieren kat katten poes hond honden dier dieren"
    ),
    "family": "family partner married spouse wife husband gezin familie getrouwd echtgenoot echtgenote",
    "leisure": (
        "hobby hobbies pastime leisure spare outside volunteer volunteers volunteering sport sports "
        "free_time spare_time weekend weekends "
        "hobby's vrije_tijd vrijetijd vrijwilliger vrijwilligers vrijwilligerswerk vrijwillig sporten "
        "naast_werk buiten_werk"
    ),
    "spoken_languages": (
        "~language ~languages ~spoken fluent fluently native bilingual "
        "taal talen vloeiend moedertaal tweetalig"
    ),
    "talks": (
        "talk talks speaker speaking spoke conference conferences presentation presentations keynote meetup "
        "lezing lezingen spreker sprak gesproken conferentie conferenties presentatie presentaties"
    ),
    "writing": (
        "article articles blog blogs post posts write writes wrote written writing publication publications published "
        "artikel artikelen schrijft schreef geschreven publicatie publicaties gepubliceerd"
    ),
    "certification": (
        "certificate certificates certification certifications certified "
        "certificaat certificaten certificering certificeringen gecertificeerd"
    ),
    "teaching": (
        "teach teaches taught teaching teacher lecturer course courses "
        "les lessen lesgeven lesgeeft docent doceert cursus cursussen onderwijs"
    ),
    "team": (
        "team teams lead leads leading led manage manages managed manager management engineers "
        # "aansturen" is also what a controller does to a machine: "Welke machines stuurt hij aan?" still
        # needs a sentence that names machines
        "leidt leiden leidde geleid leiding leidinggevende aansturen aanstuurt aangestuurd"
    ),
    "skills": (
        "skill skills technology technologies tool tools stack expertise proficient experience experienced "
        "vaardigheden vaardigheid technologie technologieën ervaring ervaren"
    ),
    "rates": (
        "rate rates price prices pricing cost costs charge charges fee fees expensive terms conditions "
        "tarief tarieven uurtarief dagtarief prijs prijzen kost kosten voorwaarden"
    ),
    "availability": (
        "available availability capacity "
        "beschikbaar beschikbaarheid inzetbaar"
    ),
    "contact": "contact reach email e-mail message touch bereiken bericht mailen contact_opnemen",
}

# Function words: they name nothing, in a heading or a question; they also tell the languages apart
# (text.language).
ENGLISH_STOP_WORDS = frozenset(
    "a an the and or but of for with without to in on at by from as into about after before over under "
    "is are was were be been being has have had do does did can could would will shall should may might must "
    "i you he she it we they me him her us them his its our their my your this that these those there here what "
    "which who whom whose where when why how not no yes also too very much many more most some any all "
    "behind between within during through across against among around via per than "
    "if then so because while whether just only please again even really few "
    # question and pointing words that ask rather than name ("how long since ...", "his own ...")
    "since until own somewhere anywhere instead nowadays originally".split()
)
DUTCH_STOP_WORDS = frozenset(
    "de het een en of maar van voor met zonder naar in op aan bij uit als over na onder om tot door "
    "is zijn was waren ben bent wordt worden werd heeft hebben had hadden doet doen deed kan kun kunt "
    "kon zou zal wil ik jij je u hij zij ze wij we haar hem zijn hun mijn jouw dit dat deze die er "
    "hier wat welk welke wie waar wanneer waarom hoe niet geen ja ook zeer veel meer meest sommige alle "
    "nog al eens dan achter tussen binnen tijdens via per "
    "dus want omdat terwijl alleen even graag wel toch "
    # question words and particles that ask rather than name ("hoeveel", "sinds wanneer", "af te ...")
    "hoeveel hoelang hoezo waarin waarmee waarover waaraan waarvoor waarvan sinds vanaf nadat voordat "
    "te af zo zoal zoals weleens ergens ons onze mij jullie zich heb hebt "
    # as "again", "before", "even" and "some" in English ("Wat deed hij hiervoor?", "een paar voorbeelden")
    "opnieuw hiervoor daarvoor hierna daarna zelfs paar".split()
)
STOP_WORDS = ENGLISH_STOP_WORDS | DUTCH_STOP_WORDS


def _entries(topic: str) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, ...], ...]]:
    """A topic's words that name it, its words found only through it, and its phrases."""
    entries = TOPICS[topic].split()
    return (frozenset(e for e in entries if "_" not in e and not e.startswith("~")),
            frozenset(e[1:] for e in entries if e.startswith("~")),
            tuple(tuple(e.split("_")) for e in entries if "_" in e))


_INDEX = {topic: _entries(topic) for topic in TOPICS}


_CAPITALISED = re.compile(r"(?<=[\s(\"'])([A-Z][\w'-]*|\w*\d\w*)")
SENTENCE_START = re.compile(r"(?:^|[.?!:;]\s+)\S+")


def names(text: str) -> set[str]:
    """Words written with a capital inside a sentence, or with digits: names of things. The
    first word of a sentence has a capital anyway ("Ons bureau zoekt hulp. Kan zij ...?")."""
    inside = SENTENCE_START.sub(" ", text)
    return {w for match in _CAPITALISED.findall(f" {inside}") for w in words(match)} - STOP_WORDS


def topics_of(text: str) -> list[str]:
    """The topics a text names, in TOPICS order. A Dutch compound names its head's topic
    ("avondcursus" is a course); heads shorter than six letters are left out ("programmeertalen"
    ends in "talen" but is not about languages spoken)."""
    present = set(words(text))
    phrased = {topic for topic, _ in _phrases(text)}
    if _speaks_language(present):
        phrased.add("spoken_languages")  # "Does he speak German?": not a talk
    return [topic for topic, (naming, _, _) in _INDEX.items()
            if present & naming or topic in phrased or any(_compound_of(word, naming) for word in present)]


def naming_words(text: str) -> set[str]:
    """The words of a text that name one of its topics: "degree"; "speak" and "German" together."""
    present = set(words(text))
    found = {word for word in present if topics_of(word)}
    if _speaks_language(present):
        found |= {word for word in present if word in _SPEAKING or word in _LANGUAGE or is_language(word)}
    return found


_CAPITAL = re.compile(r"(?<![\w'-])[A-Z][\w'-]*")


def capitalised(text: str) -> set[str]:
    """The words a text writes with a capital, lower-cased; a sentence's first word too ("Pools:
    goed"). Names of languages and countries are written so in both languages, and "pools" or
    "fries" without a capital is a word of its own."""
    return {word for match in _CAPITAL.findall(text) for word in words(match)}


def listed_names(text: str) -> set[str]:
    """The words of a question that are names where ``text.counterparts`` lists them: written
    with a capital, or a language's name asked with speaking ("does he speak german?"); "pools"
    and "fries" are words of their own."""
    return capitalised(text) | naming_words(text)


# Speaking names no topic of its own (a talk or a language?), nor does "language" (a programming
# language?); with each other or with a language's name, they ask about languages spoken.
_SPEAKING = frozenset("speak speaks speaking spoke spoken spreek spreekt spreken sprak spraken gesproken".split())
_LANGUAGE = frozenset("language languages taal talen".split())
_TALKS = _INDEX["talks"][0] - _SPEAKING  # a talk named as such: "conference", "lezing"


def _speaks_language(present: set[str]) -> bool:
    # not "Has he spoken at German conferences?": a talk, named as such
    return (bool(present & _SPEAKING) and not present & _TALKS
            and bool(present & _LANGUAGE or any(is_language(word) for word in present)))


def _compound_of(word: str, heads: frozenset[str]) -> bool:
    return len(word) >= 9 and any(len(head) >= 6 and word.endswith(head) and len(word) - len(head) >= 3
                                  for head in heads)


def phrase_words(text: str) -> set[str]:
    """The words of a text that are part of a topic's phrase ("spare time"): the phrase, not each
    word, is what the text asks about."""
    return {word for _, span in _phrases(text) for word in span}


# Words a phrase may hold in a visitor's wording besides its own: "naast haar werk" says "naast
# werk", "contact met hem opnemen" says "contact opnemen".
_FILLERS = frozenset("de het een haar zijn hun hem hen je jouw u uw mijn met".split())


def _phrases(text: str) -> list[tuple[str, list[str]]]:
    """Each topic phrase the text says, with the text's words from the phrase's first word to its
    last (the fillers between them included)."""
    found = words(text)
    kept = [i for i, word in enumerate(found) if word not in _FILLERS]
    spans = []
    for topic, (_, _, phrases) in _INDEX.items():
        for phrase in phrases:
            for start in range(len(kept) - len(phrase) + 1):
                at = kept[start:start + len(phrase)]
                if tuple(found[i] for i in at) == phrase:
                    spans.append((topic, found[at[0]:at[-1] + 1]))
    return spans


def topic_words(topics: list[str]) -> set[str]:
    """Every single word of ``topics``."""
    return {word for topic in topics for word in _INDEX[topic][0] | _INDEX[topic][1]}


def content_words(text: str) -> list[str]:
    """The words of a text that name something: no function words, no bare numbers."""
    return [w for w in words(text) if w not in STOP_WORDS and not w.isdigit()]


# Name particles ("Jan van der Berg", "Ana da Silva"): part of a name, but no name of their own.
_PARTICLES = frozenset("van de der den het ter ten von vom zu le la du da das do dos di del della el al bin ibn "
                       "'t mc st".split())


def name_words(name: str) -> list[str]:
    """The words that name someone: "Jan van der Berg" is "jan" and "berg", the default
    "the owner" nothing (no particles, no function words, no initials)."""
    return [w for w in words(name) if len(w) > 1 and w not in STOP_WORDS and w not in _PARTICLES]


def expansion(text: str) -> list[str]:
    """The other words of every topic the text names (the text's own words left out)."""
    return sorted(topic_words(topics_of(text)) - set(words(text)))


# Irregular forms, so "What did she build?" finds "She built ...".
_IRREGULAR = {
    "built": "build", "taught": "teach", "led": "lead", "spoke": "speak", "spoken": "speak", "wrote": "write",
    "written": "write", "ran": "run", "began": "begin", "begun": "begin", "made": "make", "gave": "give",
    "given": "give", "held": "hold", "won": "win", "brought": "bring", "thought": "think", "sold": "sell",
    "kept": "keep", "left": "leave", "met": "meet", "paid": "pay", "grew": "grow", "grown": "grow",
    "chose": "choose", "chosen": "choose", "drove": "drive", "driven": "drive", "rode": "ride", "ridden": "ride",
    "sprak": "spreek", "gesproken": "spreek", "schreef": "schrijf", "geschreven": "schrijf", "begon": "begin",
    "begonnen": "begin", "gaf": "geef", "gegeven": "geef", "liep": "loop", "gelopen": "loop",
    "gewonnen": "win", "koos": "kies", "gekozen": "kies",
}
# Heads of English words that end like a Dutch compound's head word but are not compounds.
_NOT_HEADS = frozenset("rate ring ting able tion ment ness less ship ward wise like time ence ance sion".split())
_COGNATE_ENDINGS = (("ncies", "nt"), ("ncy", "nt"), ("nties", "nt"), ("ntie", "nt"), ("tions", "t"), ("tion", "t"),
                    ("ties", "t"), ("tie", "t"))
_SUFFIXES = ("ies", "ied", "ing", "ers", "ors", "ed", "es", "er", "or", "ly", "en", "de", "te", "s", "e")


def stem(word: str) -> str:
    """A word without its inflection: two words with the same stem are the same word (``same_word``)."""
    return _stem(word)


def _stem(word: str) -> str:
    """A word without its inflection ("studies" -> "study", "speaking" -> "speak", "lived" -> "liv")."""
    word = word.removesuffix("'s")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    # the same Latin word in both languages: urgency/urgentie, evaluation/evaluatie/evaluated
    for ending, root in _COGNATE_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)] + root
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= (2 if suffix == "ing" else 3):
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word.rstrip("e")


def same_word(a: str, b: str) -> bool:
    """Two words are the same word in another form: "studies"/"study", "lives"/"living",
    "maintained"/"maintenance", or a Dutch compound and its head ("platformteam"/"team")."""
    if a == b:
        return True
    if _stem(a) == _stem(b):
        return True
    short, long = sorted((a, b), key=len)
    if len(short) >= 6 and long.startswith(short) and len(long) - len(short) <= 4:
        return True  # a derived word: maintain/maintenance, develop/developer
    return (long.endswith(short) and len(long) - len(short) >= 3
            and (len(short) >= 5 or (len(short) == 4 and short not in _NOT_HEADS)))


@lru_cache(maxsize=16)  # read for every question and every claim: one owner's set, made once
def owner_references(owner: str) -> frozenset[str]:
    """The words a visitor names the owner with: their name's words, the third person (the twin
    speaks of its owner in the third person) and "the owner"."""
    lexicon = shared()
    return frozenset(name_words(owner)) | lexicon.words("owner.third_person") | lexicon.words("owner.nouns")

"""A cited document as the claim checker (``knowledge.claims``) reads it: its sentences and
their clauses, paragraphs, words, names, quantities and the sentences a negation governs; and
the small readings of a text both sides share (content-word stems, clauses, negation, the other
one of a pair of alternatives, an institution's or field's words in the other language).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

from knowledge.content import outline
from text import words as wordlist
from text.counterparts import counterparts, phrase_groups
from text.forms import same_word
from text.language import detect_language
from text.lexicon import shared
from text.numbers import quantities, rates
from text.sentences import split_sentences


class Source:
    """A cited document as the checker reads it: its sentences and their clauses (a claim often
    says one part of a long sentence), words, names and quantities."""

    def __init__(self, title: str, body: str) -> None:
        self.title, self.body = title, body
        sentences = split_sentences(body) or [body]
        # each piece: (text, index of its sentence); a sentence's clauses after the sentence
        self.pieces = [(s, i) for i, s in enumerate(sentences)]
        self.pieces += [(c, i) for i, s in enumerate(sentences) for c in clauses(s)]
        self.sentences = sentences
        # the title is no evidence: a taught answer's title is the visitor's question, in their words
        every = wordlist.words(body)
        self.words = set(every)
        self.title_words = set(wordlist.words(title))  # what a document is about, for names placed (never as found)
        self.phrase_text = f" {' '.join(every)} "  # for phrase lookups
        # what a sentence's section is about (the headings above it) holds for it
        self.section = [" ".join(headings) for headings in _headings_above(body, sentences)]
        self.section_words = [set(wordlist.words(about)) for about in self.section]
        self.quantities = quantities(body)
        self.sentence_words = [wordlist.words(s) for s in sentences]
        self.near_words = [set(words) for words in self.sentence_words]
        self.near_quantities = [quantities(s) for s in sentences]
        self.piece_stems = [stems(text) for text, _ in self.pieces]
        self.sentence_stems = self.piece_stems[:len(sentences)]  # the sentences are the first pieces
        self.stems = set().union(*self.sentence_stems)
        self.paragraph = _paragraphs(body, sentences)
        self.language = detect_language(body)
        # a list under a heading or lead-in that negates ("## What I don't take on", "Niet:"):
        # each item says its part of the negation
        self.listed = _negated_items(body)
        self.negated = {text: negates(text) != (sentences[i] in self.listed) for text, i in self.pieces}
        # the negating pieces, each with its own words (its negation aside) and how many of them a
        # claim must write to restate it: two for a sentence that negates itself, three for a
        # negating list's item ("- Web design" under "What I don't take on" is no sentence); a
        # heading names a topic and states nothing ("## Why not hire a crane" asks a question)
        self.negating = [(text, own, 3 if text in self.listed else 2)
                         for (text, _), piece in zip(self.pieces, self.piece_stems, strict=True)
                         if self.negated[text] and not text.lstrip().startswith("#")
                         and (own := {w for w in piece - NEGATION_STEMS if "n't" not in w and "n\u2019t" not in w})]

    @functools.cached_property
    def rates(self) -> set[tuple[float, str]]:
        """(value, period): "40,000 bookings a month" (read when a claim gives a rate)."""
        return rates(self.body)

    @functools.cached_property
    def surrounding(self) -> list[set[str]]:
        """Per sentence, its words with its neighbours' in its paragraph and the headings above it
        (read when a claim binds two names)."""
        return [self.section_words[j].union(*(self.near_words[k] for k in self.beside({j})))
                for j in range(len(self.sentences))]

    @functools.cached_property
    def spans(self) -> set[float]:
        """The lengths, in years, of the spans a sentence gives by two years ("from 2017 to 2021":
        four): a claim may count the years a document dates."""
        out = set()
        for found in self.near_quantities:
            years = sorted(v for v in found.values if v.is_integer() and 1900 <= v <= 2100)
            out |= {b - a for i, a in enumerate(years) for b in years[i + 1:] if b > a}
        return out

    def beside(self, sentences: set[int], within_paragraph: bool = True) -> set[int]:
        """The sentences and those next to them (in their paragraph)."""
        return {k for j in sentences for k in (j - 1, j, j + 1) if 0 <= k < len(self.sentences)
                and (self.paragraph[k] == self.paragraph[j] or not within_paragraph)}

    def has_name(self, name: str) -> bool:
        return has_name_in(self.words, name)


def years_counted(claim: str, source: Source) -> set[float]:
    """The claim's counts of years ("about four years", "vier jaar") that a span of the document
    is as long as (``Source.spans``)."""
    tokens = claim.lower().split()
    return {v for i, token in enumerate(tokens) for v in quantities(token).values
            if v in source.spans and any(w.startswith(_YEARS) for w in tokens[i + 1:i + 3])}


_YEARS = ("year", "jaar", "jare", "jahr")


def bare_name(token: str) -> str:
    """A name as a word of the text: lower case, without its quotes, dashes or "'s"."""
    return token.lower().strip("'\u2019-.").removesuffix("'s").removesuffix("\u2019s")


def has_name_in(words: set[str], name: str, loose: bool = True) -> bool:
    """Whether ``words`` hold a name: as written, in the other language (``text.counterparts``) or
    inflected ("Groningen" in "Groningse", "Nederlandse" for "Nederland"); ``loose``, also where a
    word of the text opens the name ("Quill" for "Quillmark"; a binding is judged without it, or
    "data" would write "Datafold")."""
    word = bare_name(name)
    if word in words or counterparts(word) & words:
        return True
    if any(word in w.split("-") for w in words if "-" in w):  # "LLM" in "llm-toepassing"
        return True
    if len(word) < 5 and word.endswith("s") and word[:-1] in words:  # "PLCs" where it writes "PLC's"
        return True
    if len(word) < 5:  # an acronym or a short name: its plural or possessive only ("VLANs")
        return any(w.startswith(word) and len(w) <= len(word) + 2 for w in words if w[:1] == word[:1])
    stem = word[:max(4, len(word) - 3)]
    return len(word) >= 5 and any(w.startswith(stem) or (loose and word.startswith(w[:max(4, len(w) - 3)]))
                                  for w in words if len(w) >= 4 and w[0] == word[0])


_CLAUSE = re.compile(r"[;:]\s+|,\s+(?=(?:and|but|which|who|where|while|en|maar|die|dat|waar|terwijl)\b)|"
                     r"\s+(?:and|en)\s+(?=[a-z]+(?:ed|de|te|t)\b)")


def clauses(sentence: str) -> list[str]:
    """A long sentence's clauses, each of three words or more (a sentence of one clause: none)."""
    parts = [p.strip() for p in _CLAUSE.split(sentence)]
    return [p for p in parts if len(p.split()) >= 3] if len(parts) > 1 else []


def stems(text: str) -> set[str]:
    """A text's content words, each cut to its first six letters (a crude stem for both languages:
    "engineers" and "engineering", "gebouwd" and "gebouwde")."""
    return {w[:6] for w in wordlist.content_words(text) if len(w) >= 3}


def _paragraphs(body: str, sentences: list[str]) -> list[int]:
    """Per sentence, the number of the paragraph it stands in (a heading, a table row, a list item
    or a sentence not found again: one of its own)."""
    blocks: list[list[str]] = [[]]
    for line in body.splitlines():
        alone = re.match(r"\s*(?:\||[-*+]\s|\d+[.)]\s|#)", line)
        if not line.strip() or alone:
            # a list item's sentences are one paragraph ("PhD, 2020. Thesis: ..."); a row or heading stands alone
            blocks.append([line] if alone and _ITEM.match(line) else [])
        if line.strip() and not alone:
            blocks[-1].append(line)
    where: dict[str, int] = {}
    for number, block in enumerate(blocks):
        for sentence in split_sentences("\n".join(block)) if block else []:
            where.setdefault(sentence, number)
    return [where.get(sentence, -1 - i) for i, sentence in enumerate(sentences)]


def _headings_above(body: str, sentences: list[str]) -> list[tuple[str, ...]]:
    """Per sentence, the headings its section stands under (one per level, outermost first), as
    CommonMark reads them (``knowledge.content.outline``: a "# comment" inside a fenced code block
    is none). A sentence is looked for after the one before it; one not found as written (its
    spaces changed) takes that place."""
    lines, headings = outline(body)
    text = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    offsets: list[int] = []  # where each set of headings comes into force
    marks: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    for heading in headings:
        stack = [(lv, h) for lv, h in stack if lv < heading.level] + [(heading.level, heading.text)]
        offsets.append(starts[heading.start])
        marks.append(tuple(h for _, h in stack))
    found, start = [], 0
    for sentence in sentences:
        at = text.find(sentence, start)
        start = at if at >= 0 else start
        index = bisect.bisect_right(offsets, start) - 1
        found.append(marks[index] if index >= 0 else ())
    return found


_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+)$")


def _negated_items(body: str) -> set[str]:
    """The sentences of the list items that a negating heading or lead-in (a line ending in ":")
    introduces."""
    found: set[str] = set()
    negating = False
    for line in body.splitlines():
        item = _ITEM.match(line)
        if item:
            if negating:
                found.update(split_sentences(item.group(1)))
        elif line.lstrip().startswith("#") or line.rstrip().endswith(":"):
            # its last sentence says what the list is ("No time to plan? Anna helps with:" does not
            # negate); a heading that asks ("## Not sure where to start?") negates nothing
            said = split_sentences(line.lstrip("# ").strip()) or [""]
            negating = negates(said[-1]) and not line.rstrip().endswith("?")
        elif line.strip() and not line.startswith((" ", "\t")):
            negating = negating and line.lstrip().startswith("#")  # a paragraph ends a lead-in's list
    return found


def negates(text: str) -> bool:
    words = wordlist.words(text)
    return any(_negation(w) and not _bound(words, i) for i, w in enumerate(words)) or advises_against(text)


def _bound(words: list[str], i: int) -> bool:
    """Whether the negation at ``words[i]`` opens a bound, which negates nothing: "no fewer than
    twelve" is "at least twelve", "niet meer dan drie" is "hooguit drie"."""
    return words[i + 2:i + 3] in (["than"], ["dan"], ["als"]) and words[i + 1] in _COMPARED


def advises_against(text: str) -> bool:
    """Whether a clause of the text advises against something: "advises against", "ontraadt", the
    parts of a separable verb in one clause ("raadt ... af"; ``[negation] advising``)."""
    for part in _GOVERNING.split(text):
        words = wordlist.words(part)
        if _ADVISING.intersection(words) or any(f"{a} {b}" in _ADVISING for a, b in itertools.pairwise(words)):
            return True
        # "raadt ... af", not "raadt ... aan om af te wachten"
        if any(f"{a} {b}" in _ADVISING and _TOWARDS.isdisjoint(words[i + 1:j])
               for i, a in enumerate(words) for j, b in enumerate(words[i + 2:], i + 2)):
            return True
    return False


def _negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't")


_GOVERNING = re.compile(r"[,;:.!?()]|\b(?:and|but|or|en|maar|und|aber|oder)\b", re.IGNORECASE)  # a clause's ends


def governed(text: str) -> list[list[str]]:
    """The words each negation of a text governs: the content words (at most three) after it in
    its clause: "brood" in "ik bak geen brood op zondag", "fly long routes" in "He never flies
    long routes at night"; "honden" and "katten" in "Ik verzorg geen honden en ook niet katten".
    "Not only", "niet alleen" restrict nothing and govern nothing."""
    return [objects for _, objects in _governing(text)]


def _governing(text: str) -> list[tuple[str, list[str]]]:
    """Each negation of a text with the words it governs (``governed``)."""
    found = []
    for part in _GOVERNING.split(text):
        words = wordlist.words(part)
        for i, word in enumerate(words):
            if _negation(word) and not (i + 1 < len(words) and words[i + 1] in _ONLY):
                found.append((word, [w for w in words[i + 1:] if w not in wordlist.STOP_WORDS and len(w) >= 3][:3]))
    return found


def negates_against(text: str, other: str) -> bool:
    """Whether ``text`` negates something ``other`` says: a negation whose governed words (``governed``)
    ``other`` writes, inflected or not, and does not negate itself ("takes no new members" beside
    "no new members are taken this year" says the same; "never bakes on Sundays" beside a sentence
    that names no baking or Sunday negates nothing it says); a negation that governs no content word
    counts as it stands. A preposition ("without X", "zonder X", "excluding VAT") negates
    only where ``other`` writes one of the (at most three) words it governs, in either language."""
    words = wordlist.words(text)
    written = set(wordlist.words(other))
    stems_written = {w[:6] for w in written}
    for i, word in enumerate(words):
        if word in _PREPOSITIONS:
            objects = [w for w in words[i + 1:i + 6] if w not in wordlist.STOP_WORDS][:3]
            if any(w[:6] in stems_written or counterparts(w) & written for w in objects):
                return True
    negated_there = {w for objects in governed(other) for w in objects}
    for negation, objects in _governing(text):
        if negation in _PREPOSITIONS:
            continue
        if not objects:
            return True
        if any(_same_word(w, written) for w in objects) and not all(_same_word(w, negated_there) for w in objects):
            return True
    return False


def _same_word(word: str, words: set[str]) -> bool:
    """Whether ``words`` hold ``word`` in some form (``text.forms.same_word``)."""
    return any(same_word(word, w) for w in words)


_NEGATIONS = shared().words("negation.words", ("en", "nl", "de"))


NEGATION_STEMS = frozenset(w[:6] for w in _NEGATIONS)
_PREPOSITIONS = shared().words("negation.prepositions", ("en", "nl", "de"))
_ONLY = shared().words("negation.only", ("en", "nl", "de"))  # "not only", "niet alleen": no negation
_COMPARED = shared().words("negation.bound", ("en", "nl", "de"))  # "no more than", "niet later dan": a bound
_ADVISING = shared().words("negation.advising", ("en", "nl", "de"))
_TOWARDS = frozenset({"aan", "an"})  # "raadt ... aan", "rät ... an": advising for, whatever follows


def _alternatives() -> tuple[tuple[frozenset[str], ...], ...]:
    lexicon = shared()
    sets: dict[str, list[str]] = {}
    for key in lexicon.keys("opposites."):  # opposites.<set>.<side>
        sets.setdefault(key.rsplit(".", 1)[0], []).append(key)
    return tuple(tuple(lexicon.words(side) for side in sides) for sides in sets.values())


_ALTERNATIVES = _alternatives()


def opposed(claim: str, sentence: str) -> str:
    """The word of the claim that says the other one of a pair where ``sentence`` writes one
    ("part-time" against "full-time", "daalde" against "increased"), as "claim's / sentence's";
    "" when none (or either side writes both)."""
    said, written = set(wordlist.words(claim)), set(wordlist.words(sentence))
    for sides in _ALTERNATIVES:
        here = [side for side in sides if side & said]
        there = [side for side in sides if side & written]
        if len(here) == 1 and len(there) == 1 and here[0] is not there[0]:
            return f"{min(here[0] & said)} / {min(there[0] & written)}"
    return ""


def translated_away(claim: str, names: list[str], text: str, words: set[str],
                     named: list[str] | None = None) -> list[str]:
    """``names`` less the words of an institution, degree, field or day that ``text`` (lower-case
    words between spaces, ``words`` their set: the document, or the part of it a check reads)
    writes in another form ("Delft University of Technology" where it says "TU Delft", "Applied
    Mathematics" for "Toegepaste Wiskunde": ``text.counterparts.phrase_groups``). The name's own
    part ("Delft") must still be there, and a form of two letters ("tu") counts only
    beside another of the claim's names (``named``, default ``names``: "TU Delft")."""
    if not names:
        return names
    said = f" {' '.join(wordlist.words(claim))} "
    own = {n.lower() for n in (named or names)}
    covered: set[str] = set()
    for group in phrase_groups():
        here = [form for form in group if f" {form} " in said]
        if not here:
            continue
        beside = own - {w for form in here for w in form.split()}
        if any(_writes(text, words, form, beside) for form in group if form not in here):
            covered.update(word for form in here for word in form.split())
    return [n for n in names if n.lower() not in covered]


def _writes(text: str, words: set[str], form: str, beside: set[str]) -> bool:
    """Whether ``text`` writes ``form``: the phrase, or a one-word form opening a compound
    ("zaterdag" in "zaterdagochtend", "informatica" in "informaticaopleiding"); a short form
    only next to one of the names in ``beside``."""
    if len(form) <= 2:
        return any(f" {form} {n} " in text or f" {n} {form} " in text for n in beside)
    if f" {form} " in text:
        return True
    return " " not in form and len(form) >= 5 and any(w.startswith(form) for w in words)

"""What the claim check reads in a claim and in the nearest text of its document: the names it
binds, whether it quotes a sentence, its sense (negated or not) and whether it turns the
document's round; split from ``knowledge.claims``, which judges with them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from knowledge.claims.cited import (
    Source,
    clauses,
    has_name_in,
    negates,
    negates_against,
    stems,
    translated_away,
    years_counted,
)
from knowledge.topics import owner_references
from text import words as wordlist
from text.lexicon import shared
from text.numbers import SCALED, quantities, shown

_NAME = re.compile(r"(?<=[\s(\"'\u201c\u2018])(?:[A-Z][\w'\u2019&-]*|[\w-]*\d[\w-]*[A-Za-z][\w-]*)")
# a model's lead-in that names where it read the claim ("According to her CV, ...", "Volgens zijn
# website ..."): no claim of its own, and "CV" is no name the document must write
ATTRIBUTION = re.compile(r"^(?:according to|as (?:stated|noted|listed|mentioned|described) (?:in|on)|volgens|zoals)"
                          r"(?:\s+[^\s,\d]+){1,4},\s*", re.IGNORECASE)


APART_NUMBERS = False  # a number placed apart: right 4 times of 9 on the dev sets, too few for a doubt


def apart_names(claim: str, named: list[str], across: bool, source: Source, nearest: list[int]) -> list[str]:
    """The claim's names and numbers that the document holds, but not beside what the claim says:
    true facts of the document put together wrongly (an employer placed in the city of another job,
    two figures of a recipe's oven and its weights read as a count of orders).

    Each must stand in the sentences nearest the claim in meaning (with those next to them in
    their paragraph, and what their sections are about: the headings above them). A number may
    also stand in a sentence (or next to one) that shares a word with what the claim writes beside
    it: a claim may join two figures of one document. A claim in the other language than the
    document is read by its names only: its words cannot place a number. (Names placed by the
    words beside them were measured and dropped: three words either side place a wrong city.)
    ``named``: the claim's names; ``across``: the claim is in the other language."""
    # across languages the model places a claim less surely: the sentences next to the nearest
    # count whatever their paragraph
    window = source.beside(set(nearest), within_paragraph=not across)
    about = " ".join(source.section[j] for j in sorted(set(nearest)))  # the nearest sentences' sections
    # the name a document is about (its title's: "Project: <name>") is beside all it says of it
    words = set().union(source.title_words, *(source.section_words[j] for j in set(nearest)),
                        *(source.near_words[j] for j in window))
    # a translated institution or field counts only where these sentences write it
    text = f" {' '.join(w for j in sorted(window) for w in source.sentence_words[j])} "
    names = [n for n in translated_away(claim, named, text, words) if not has_name_in(words, n)]
    if not APART_NUMBERS:
        return names
    near = quantities(about).union(*(source.near_quantities[j] for j in source.beside(set(nearest))))
    values = quantities(claim).values - near.values - years_counted(claim, source)
    if across:  # its words cannot place a number: each must stand in the nearest sentences or beside them
        return names + [shown(v) for v in sorted(values)]
    tokens = claim.split()
    apart = names
    for value in sorted(values):
        holding = {j for j, q in enumerate(source.near_quantities) if value in q.values}
        if not placed_in(tokens, lambda token, v=value: v in quantities(token).values, source, holding, values):
            apart.append(shown(value))
    return apart


def placed_in(tokens: list[str], written: Callable[[str], bool], source: Source, holding: set[int],
            unplaced: frozenset[float]) -> bool:
    """Whether a sentence that holds a name or number (``holding``), or one next to it in its
    paragraph, shares a content word or another figure with the three words either side of where
    the claim writes it (``written``: whether a token writes it); figures not placed themselves
    (``unplaced``) place nothing."""
    beside: set[str] = set()
    figures: set[float] = set()
    for i, token in enumerate(tokens):
        if written(token):
            around = " ".join(tokens[max(0, i - 3):i + 4])
            beside |= stems(around)
            figures |= quantities(around).values - unplaced
    return any(beside & source.sentence_stems[j] or figures & source.near_quantities[j].values
               for j in source.beside(holding))


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|ste|de|e)")


@functools.lru_cache(maxsize=16)  # read at every claim against every source: one owner's set, made once
def _not_names(owner: str) -> frozenset[str]:
    """The owner's name and pronouns and the months: words that name nothing a claim could invent."""
    return owner_references(owner) | shared().words("calendar.months")


def names_in(claim: str, owner: str) -> list[str]:
    """The names a claim states: capitalised words inside it (not its first word), acronyms and
    words with digits, days among them; not the owner's name or pronouns, months or function
    words."""
    # days are names: one the source lacks is flagged ("on Mondays" where it says "donderdag"), in
    # the other language through text.counterparts.phrase_groups
    skip = _not_names(owner)
    lead = ATTRIBUTION.match(claim)  # "According to her CV, ...": where it read, no name of the claim's
    found = []
    for match in _NAME.finditer(claim):  # a sentence's first word is capitalised anyway
        if (lead and match.start() < lead.end()) or SCALED.fullmatch(match.group(0)):
            continue  # a lead-in's word, or thousands ("12K", read as a number)
        word = match.group(0).strip("'\u2019-").removesuffix("'s").removesuffix("\u2019s")
        if "-" in word:  # "S5-code", "MIT-licentie": the part that names ("1-in-7": none)
            parts = [p for p in word.split("-") if any(c.isupper() for c in p)
                     or (any(c.isdigit() for c in p) and any(c.isalpha() for c in p))]
            if len(parts) != 1:
                parts = [word] if not any(p.isdigit() for p in word.split("-")) else []
            if not parts:
                continue
            word = parts[0]
        lower = word.lower()
        if len(lower) < 2 or lower in skip or lower in wordlist.STOP_WORDS or lower in found \
                or _ORDINAL.fullmatch(lower):
            continue  # an ordinal ("3rd", "95th", "21ste") counts, it names nothing
        found.append(word)
    return found


def quotes_sentence(claim: str, sentence: str) -> bool:
    """The claim holds the sentence word for word (the offline twin quotes, under its framing and
    with a list item's bold label): what it says besides must still name and count nothing the
    document lacks."""
    said = _joined_words(sentence)
    return len(said) >= 12 and said in _joined_words(claim)


@functools.lru_cache(maxsize=4096)  # a document's sentences are read at every claim that cites it
def _joined_words(text: str) -> str:
    return " ".join(wordlist.words(text))


def sense_of(claim: str, piece: str, across: bool) -> bool | None:
    """Whether the claim negates what ``piece`` says: a claim whose clauses differ in sense ("he
    does not bake bread, but he does roast coffee") by its clause that shares the most words
    with the piece; None when no one clause does (or the claim is in the other language than the
    document, ``across``)."""
    parts = clauses(claim)
    if not parts or len({negates(c) for c in parts}) == 1:
        return negates(claim)
    if across:
        return None
    words = stems(piece)
    shared = sorted(((len(stems(c) & words), negates(c)) for c in parts), reverse=True)
    return shared[0][1] if shared[0][0] > shared[1][0] else None


def reverses(claim: str, piece: str, sense: bool, listed: bool) -> bool:
    """Whether the one of the two that negates negates what the other says: "excluding VAT"
    beside a fee that names no VAT, or a piece's "without any sugar" beside a claim that says
    nothing of sugar, reverses nothing (``cited.negates_against``). A negating
    list's item (``listed``: the piece's sentence is one) negates by its heading."""
    if sense:
        return negates_against(claim, piece)
    return listed or negates_against(piece, claim)

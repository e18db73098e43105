"""Whether a cited document says what a sentence of an answer claims, without a model call.

A claim is *supported* by its cited document when all of these hold:
- every number, amount, percentage, year, date and duration in it is in the document, equal
  after normalisation (``text.numbers``: ``1,100`` = ``1.100``, "two days" = "twee dagen", "1.9k");
- every name in it (a capitalised word inside the sentence, an acronym, a word with digits) is in
  the document, in the other language's spelling too (``text.counterparts``) and inflected
  ("Zwolle" in "Zwolse");
- in the document's own language, it does not bring ``NOVEL_WORDS`` (3) or more content words
  the document writes nowhere that are also at least ``NOVEL_SHARE`` (half) of its content words
  (its names aside, checked as names), unless the model puts it at least ``NOVEL_NEAR`` from one
  of the document's pieces (a reworded sentence): an invented fact brings words of its own;
- its meaning is close to one sentence of the document: the primary model's cosine (multilingual,
  so an English claim may cite a Dutch page) at least ``MEANING_FLOOR``, chosen on the
  development set (``evals/data/claims.jsonl``, ``manage.py eval_claims``);
- it contradicts no sentence plainly: neither the nearest sentence with its sense turned round
  ("not", "geen", "never"; a list item under a heading such as "What I don't take on" says the
  heading's "not"), nor a negating sentence whose every content word the claim writes without
  the negation;
- its names and numbers stand beside what it says: in the sentences nearest it (a number also in
  a sentence that shares a word with what the claim writes beside it), not in another fact of the
  document (a true employer put in the city of another job the document names).

Each finding has a ``kind`` (the check that made it, ``KINDS``) and is ``certain`` when its kind is
one of ``CERTAIN``: a figure the document does not write (``changed_figure``), the one kind right
on nearly every claim of the sets read while writing it and of a set written without sight of it
(docs/ARCHITECTURE.md); a visitor sees only certain findings marked (``applied``). The rest, a
missing name and a sentence another document of the owner says among them, are doubts, kept for
the owner.

A claim several documents are cited for is supported when one of them, or all of them read as
one, supports it (the offline twin quotes a sentence of each under one pair of citations). The
checker reads the document's own text (its front matter aside, ``knowledge.claims.cited``); a paraphrase
the model cannot see as close, or a fact spread over two sentences, may be flagged wrongly:
measured, per kind and language, in docs/ARCHITECTURE.md ("Claims checked against their sources").
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from knowledge.claims import vectors
from knowledge.claims.bindings import bound_elsewhere
from knowledge.claims.cited import (
    Source,
    negates,
    opposed,
    stems,
    translated_away,
)
from knowledge.claims.figures import changed_figure as changed_figure  # the figures' own check, read by tests
from knowledge.claims.figures import figure_finding, moved_figure, read_figures
from knowledge.claims.negations import governed_kept, negation_dropped, negation_restated
from knowledge.claims.readings import ATTRIBUTION, apart_names, names_in, quotes_sentence, reverses, sense_of
from knowledge.embedders import Embedder
from knowledge.topics import owner_references
from knowledge.translation import cached_vectors
from text import words as wordlist
from text.language import detect_language
from text.lexicon import shared
from text.numbers import quantities
from text.sentences import split_sentences

MEANING_FLOOR = 0.83
NEGATION_NEAR = 0.85  # a nearest clause this close says the same thing, so a negation turns it round
NEGATION_OVERLAP = 0.7  # the same, read from the words: this share of the claim's content words
LEXICAL_ENOUGH = 0.7  # a piece holding this share of a claim's content words places it without the model
ADDED_WORDS = 2  # novel words enough in a claim that says it adds something ("also", "ook")
NOVEL_WORDS, NOVEL_SHARE = 3, 0.5  # a claim this new to its document says something else (development set)
NOVEL_NEAR = 0.9  # a novel claim at least this near a piece of the document in meaning rewords it (dev sets)
MOST_CLAIMS = 24  # cited sentences checked per answer at most (the first): a long answer costs no more
NEAREST = 2  # the sentences nearest a claim in meaning, whose neighbourhood must hold its names and numbers
_ADDING = shared().words("adding.words", ("en", "nl", "de"))
_CITATION = re.compile(r"\[source:\s*([^\]\n]+?)\s*\]")
_AFTER_CITATION = re.compile(r"(\[source:[^\]\n]+\])[ \t]+(?=[A-Z0-9(\"'\u201c])")
_LEADING_CITATIONS = re.compile(r"^(?:\s*\[source:[^\]\n]+\])+\s*")
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

# each kind of finding: the coarse reason it is shown with, and whether it is certain
KINDS = {
    "figure": "number",  # a figure the document does not write (in its language, or counting the same)
    "new-figure": "number",  # the same, in the other language than the document, which counts no such thing
    "rate": "number",  # the document's figure, per another period
    "derived": "number",  # what the document's figures yield by arithmetic ("8 lower", "two-thirds")
    "name": "name",  # a name the document never writes, in either language
    "elsewhere": "",  # another document of the owner says it, the cited one does not (its reason: what
    # the check of the cited one found)
    "listed": "negation",  # a negating list's item, restated without the negation
    "negation-dropped": "negation",  # a negating sentence's words, without the negation
    "negation": "negation",  # the nearest clause, its sense turned round
    "opposite": "negation",  # the other one of a pair ("part-time" for "full-time")
    "governed": "negation",  # the words a negation governs, said without it
    "novel": "meaning",  # mostly words the document does not write
    "added": "meaning",  # "also …" with words the document does not write
    "far": "meaning",  # no sentence of the document near it in meaning
    "apart": "combination",  # a name or number of the document, not beside what the claim says
    "binding": "combination",  # two names the document binds to other names
}
# a name is a doubt: the document may write it in another form (a region or an organisation in the
# other language, "GPs" for "general practitioners"): 31 of 34 right on the sets read, too few. A
# sentence another document says ("elsewhere") is as certain as what the cited one's check found:
# on held-out set E, written without sight of the checker, it was right 36 times of 43, far under
# the 98% a certain kind needs (docs/ARCHITECTURE.md)
CERTAIN = frozenset({"figure"})
# what the cited document does not write at all: said by another document, it was cited wrongly (a
# finding where the cited document speaks of the same, a negation or a combination, is not)
ABSENT = frozenset({"new-figure", "name", "novel", "added", "far"})


@dataclass(frozen=True)
class Unsupported:
    sentence: str  # without its citation marks
    title: str
    reason: str  # number | name | meaning | negation | combination
    detail: str = ""
    written: str = ""  # the sentence as the answer has it, citation marks included
    kind: str = ""  # the check that found it (``KINDS``)
    certain: bool = False  # a kind of ``CERTAIN``: shown to the visitor; else a doubt, for the owner

    def as_event(self) -> dict:
        return {"sentence": self.sentence, "title": self.title, "reason": self.reason, "detail": self.detail,
                "kind": self.kind, "certain": self.certain}


def claims(answer: str, framing: tuple[str, ...] = ()) -> list[tuple[str, list[str], str]]:
    """The answer's sentences that cite: each without its citation marks and without the twin's
    own ``framing`` (a lead-in such as "Here is what …'s knowledge base says:", "(in Dutch)"),
    the titles it cites, and the sentence as written."""
    sentences: list[str] = []
    # a citation ends its sentence: "… Logistics. [source: CV] The planner …" is two
    for piece in split_sentences(_AFTER_CITATION.sub("\\1\n", answer)):
        # "… in Zwolle. [source: CV] Her team …": a citation after the full stop is the sentence before's
        leading = _LEADING_CITATIONS.match(piece)
        if leading and sentences:
            sentences[-1] = f"{sentences[-1]} {leading.group(0).strip()}"
            piece = piece[leading.end():]  # noqa: PLW2901
        if piece.strip():
            sentences.append(piece)
    out = []
    for sentence in sentences:
        titles = list(dict.fromkeys(m.group(1) for m in _CITATION.finditer(sentence)))
        text = _CITATION.sub(" ", sentence)
        for frame in framing:
            text = text.replace(frame, " ")
        text = " ".join(text.split()).strip()
        if titles and len(wordlist.words(text)) >= 3:
            out.append((text, titles, sentence))
    return out


def claim_texts(answer: str) -> list[str]:
    """The cited sentences of an answer (or of the part streamed so far), as the check reads them."""
    return [text for text, _, _ in claims(answer)]


def check(answer: str, sources: dict[str, Source], embedder: Embedder, owner: str,
          framing: tuple[str, ...] = ()) -> list[Unsupported]:
    """Every cited sentence of ``answer`` (the first ``MOST_CLAIMS``) its cited sources do not
    support, certain or in doubt. ``sources``: the owner's documents by title, the cited ones and
    any others (those tell a sentence another document says); the cited titles missing from it are
    verify's unknown citations, not checked here."""
    cited = [(text, [t for t in titles if t in sources], written)
             for text, titles, written in claims(answer, framing)]
    cited = [claim for claim in cited if claim[1]][:MOST_CLAIMS]
    found = []
    for text, titles, written in cited:
        vector = _Lazy(embedder, text)
        verdicts = [_judge(text, vector, sources[t], embedder, owner) for t in titles]
        if len(titles) > 1 and all(v is not None for v in verdicts):
            # a sentence citing several documents may take its facts from each: read them as one
            verdicts.append(_judge(text, vector, _merged(tuple((t, sources[t].body) for t in titles)),
                                   embedder, owner))
        if all(v is not None for v in verdicts):
            base, detail = verdicts[0]
            kind, certain = base, all(v[0] in CERTAIN for v in verdicts)
            other = _elsewhere(text, vector, titles, sources, embedder=embedder, owner=owner) \
                if all(v[0] in ABSENT | CERTAIN for v in verdicts) else ""
            if other:  # what the model read in one document and cited another for
                kind, detail = "elsewhere", f"said in {other} ({base}: {detail})"
            found.append(Unsupported(text, titles[0], KINDS[base], detail, written, kind, certain))
    return found


def _elsewhere(claim: str, vector: _Lazy, titles: list[str], sources: dict[str, Source], *, embedder: Embedder,
               owner: str) -> str:
    """The title of another document (not cited) that supports the claim, or ""."""
    for title, source in sources.items():
        if title not in titles and _judge(claim, vector, source, embedder, owner) is None:
            return title
    return ""


@functools.lru_cache(maxsize=64)
def _merged(documents: tuple[tuple[str, str], ...]) -> Source:
    """Several documents read as one (their titles and bodies), made once while they stay the same."""
    return Source(" + ".join(t for t, _ in documents), "\n\n".join(body for _, body in documents))


def warm(sources: list[Source], embedder: Embedder) -> int:
    """Embed the documents' sentences and clauses and read their figures now (a serving process, as
    it starts), so the first answers citing them do not wait; returns how many pieces."""
    pieces = list(dict.fromkeys(text for source in sources for text, _ in source.pieces))
    for source in sources:
        read_figures(source)
    for start in range(0, len(pieces), 64):
        cached_vectors(_cache, embedder, pieces[start:start + 64])
    return len(pieces)


def applied(answer: str, unsupported: list[Unsupported], mode: str, marker: str) -> str:
    """The answer as the visitor sees it: ``mark``: each certainly unsupported sentence without its
    citation and followed by ``marker``; ``strip``: without those sentences; ``log``: unchanged.
    A doubt never changes what the visitor reads."""
    if mode == "log":
        return answer
    for claim in (u for u in unsupported if u.certain):
        # as written, whatever white space the answer had between its words
        where = re.search(r"\s+".join(re.escape(w) for w in claim.written.split()), answer) if claim.written else None
        if where is None:
            continue
        if mode == "strip":
            replaced = ""
        else:
            bare = " ".join(_CITATION.sub(" ", where.group(0)).split())
            end = bare[-1] if bare and bare[-1] in ".!?" else ""
            replaced = f"{bare[:len(bare) - len(end)].rstrip()} {marker}{end}"
        before, after = answer[:where.start()], answer[where.end():]
        if not replaced and (not before or before.endswith((" ", "\t", "\n"))):
            after = after.lstrip(" \t")  # the space that joined the removed sentence to the next
        answer = before + replaced + after
    return answer.strip()  # only the ends: indented code and nested lists keep their spaces


class _Lazy:
    """A claim's vector, embedded only when a check needs it (a claim in the document's own words
    is placed by its words: one embedding costs more than the rest of the check)."""

    def __init__(self, embedder: Embedder, text: str) -> None:
        self.embedder, self.text, self._vector = embedder, text, None

    def get(self) -> np.ndarray:
        if self._vector is None:
            self._vector = vectors.vector(self.embedder, self.text)  # made as it streamed, or now
        return self._vector


def _nearness(claim: str, vector: _Lazy, source: Source, embedder: Embedder,
              names: list[str], *, owner: str) -> tuple[np.ndarray, bool]:
    """How near each of the document's pieces is to the claim, and whether that was read from
    the words: the share of the claim's content words a piece holds, when one piece holds at
    least ``LEXICAL_ENOUGH`` of them; else the model's cosine (a claim in the other language, or
    in other words). The claim's names place nothing: a name put beside the wrong fact would pull
    the sentence it came from nearer; unless they are all it says ("She is a Certified X Y"): then
    they place it. The owner's name places nothing (a document writes it anywhere)."""
    said = stems(claim) - {w[:6] for w in owner_references(owner)}
    words = (said - stems(" ".join(names))) or said
    if words:
        shares = np.array([len(words & piece) / len(words) for piece in source.piece_stems])
        if shares.max() >= LEXICAL_ENOUGH:
            return shares, True
    return cached_vectors(_cache, embedder, [text for text, _ in source.pieces]) @ vector.get(), False


def _nearest(vector: _Lazy, source: Source, embedder: Embedder) -> float:
    """The model's cosine between the claim and the document's piece nearest it."""
    return float((cached_vectors(_cache, embedder, [text for text, _ in source.pieces]) @ vector.get()).max())


def _novel(claim: str, owner: str, source: Source, named: list[str]) -> tuple[str, list[str]] | None:
    """The claim's content words the document writes nowhere, when they are at least
    ``NOVEL_WORDS`` and ``NOVEL_SHARE`` of its content words: a claim in the document's language
    that says mostly what the document does not (a paraphrase rewords some words, not most); or
    at least ``ADDED_WORDS`` in a claim that says it adds something ("also", "ook": ``[adding]``).
    ``named``: the claim's names, checked as names (none is new here)."""
    own = {w[:6] for w in owner_references(owner)}
    names = {w.lower()[:6] for w in named}
    lead = ATTRIBUTION.match(claim)
    said = [w for w in dict.fromkeys(wordlist.content_words(claim[lead.end():] if lead else claim))
            if len(w) >= 3 and w[:6] not in own]
    # numbers are read as numbers; a short word may open a longer one of the document ("hour": "hourly")
    novel = [w for w in said if w[:6] not in source.stems and w[:6] not in names and not quantities(w).values
             and not (len(w) < 6 and any(stem.startswith(w) for stem in source.stems))]
    if len(novel) >= NOVEL_WORDS and len(novel) >= NOVEL_SHARE * len(said):
        return "novel", novel
    # "also", "ook", "besides": the claim adds something, and what it adds is not in the document
    added = [w for w in novel if w not in _ADDING]
    return ("added", added) if len(added) >= ADDED_WORDS and _ADDING.intersection(wordlist.words(claim)) else None


def _judge(claim: str, vector: _Lazy, source: Source, embedder: Embedder,
           owner: str) -> tuple[str, str] | None:
    """Why ``source`` does not support ``claim``, or None when it does."""
    quoted = [sentence for sentence in source.sentences if quotes_sentence(claim, sentence)]
    across = detect_language(claim) != source.language  # its words cannot be the document's
    figure = figure_finding(claim, source, across=across)
    if figure:
        return figure
    named = names_in(claim, owner)
    names = translated_away(claim, [n for n in named if not source.has_name(n)], source.phrase_text, source.words,
                             named)
    if names:
        return "name", ", ".join(names)
    if quoted:
        # it holds one of the document's sentences word for word, and no name or number of its own;
        # unless that sentence is a negating list's item, and the claim does not negate
        if not negates(claim) and any(source.negated[s] and s in source.listed for s in quoted):
            return "listed", f"the document lists it under a negation: {quoted[0][:120]}"
        return None
    dropped = negation_dropped(claim, source)
    if dropped:
        return "negation-dropped", f"the document: {dropped[:120]}"
    novel = None if across else _novel(claim, owner, source, named)
    if novel and (novel[0] == "added" or _nearest(vector, source, embedder) < NOVEL_NEAR):
        return novel[0], f"words the document does not write: {', '.join(novel[1])}"
    return _contradiction(claim, vector, source, embedder, named, across=across, owner=owner)


def _contradiction(claim: str, vector: _Lazy, source: Source, embedder: Embedder, named: list[str], *, owner: str,
                   across: bool) -> tuple[str, str] | None:
    """Why the text nearest to ``claim`` contradicts it, or places its names apart, or None:
    what ``_judge`` asks once the claim's figures, names and words are all the document's."""
    scores, lexical = _nearness(claim, vector, source, embedder, named, owner=owner)
    order = np.argsort(-scores, kind="stable")
    best = source.pieces[int(order[0])][1]
    if not lexical and scores[order[0]] < MEANING_FLOOR:
        return "far", f"nearest: {source.sentences[best][:120]} ({scores[order[0]]:.3f})"
    # a contradiction only against what says the same thing: the nearest clause of the nearest
    # sentence, close enough to be the same statement with its sense turned round
    same = [int(i) for i in order if source.pieces[int(i)][1] == best]
    piece = max(same, key=lambda i: (source.pieces[i][0] != source.sentences[best], scores[i]))
    text = source.pieces[piece][0]
    sense = sense_of(claim, text, across)
    if sense is not None and scores[piece] >= (NEGATION_OVERLAP if lexical else NEGATION_NEAR) \
            and sense != source.negated[text] \
            and reverses(claim, text, sense, listed=source.sentences[best] in source.listed) \
            and not negation_restated(claim, source):
        return "negation", f"nearest: {text[:120]}"
    # and the other one of a pair, in that clause ("lower" and "increased" of two things in one
    # sentence are no opposites)
    opposite = opposed(claim, text) if scores[piece] >= (NEGATION_OVERLAP if lexical else NEGATION_NEAR) else ""
    if opposite:
        return "opposite", f"{opposite}, nearest: {text[:120]}"
    nearest = [source.pieces[int(i)][1] for i in order[:NEAREST]]
    kept = "" if across else governed_kept(claim, source, nearest)
    if kept:
        return "governed", f"the document: {kept[:120]}"
    moved = moved_figure(claim, source, nearest, across=across)
    if moved:
        return moved
    apart = apart_names(claim, named, across, source, nearest)
    if apart:
        return "apart", f"{', '.join(apart)}: in the document, not beside what the claim says"
    unbound = bound_elsewhere(claim, named, source)
    if unbound:
        return "binding", f"{' / '.join(unbound)}: bound to other names in the document"
    return None

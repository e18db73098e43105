"""A claim read against the negations of its cited document (``knowledge.claims.cited``): a
negating sentence restated without its negation, the words a nearby negation governs said plainly,
and a negation the claim says as the document does, in its own words."""

from __future__ import annotations

from knowledge.claims.cited import Source, clauses, governed, negates, stems


def negation_dropped(claim: str, source: Source) -> str:
    """A negating sentence or clause of the document that the claim writes every content word of,
    without a negation: "he also repairs old clocks" where the document says "He does not repair
    old clocks" (whatever else the claim says, and however near
    the model puts the two)."""
    if negates(claim):
        return ""
    said = stems(claim)
    for text, own, least in source.negating:
        if len(own) >= least and all(_written_inflected(word, said) for word in own):
            return text
    return ""


def negation_restated(claim: str, source: Source) -> bool:
    """Whether a negating piece of the document (``Source.negating``) governs words the claim writes,
    two of them or all it governs, one of them governed by the claim's own negation: a claim that
    negates says that negation in its own words ("the tool never sets a price alone" beside "it
    never sets prices on its own"), whatever piece the model puts nearest; not one that negates
    something else beside them ("it sets prices alone, so nobody checks them")."""
    said = stems(claim)
    negated = {w[:6] for words in governed(claim) for w in words}
    return any(words and sum(_written_inflected(w[:6], said) for w in words) >= min(2, len(words))
               and any(_written_inflected(w[:6], negated) for w in words)
               for text, _, _ in source.negating for words in governed(text))


def governed_kept(claim: str, source: Source, nearest: list[int]) -> str:
    """A negating sentence or clause among the nearest whose negated words the claim writes
    without a negation: "bakt brood" beside "ik bak geen brood", "feeding the ducks" beside
    "Please do not feed the ducks"."""
    if negates(claim):
        return ""
    said = stems(claim)
    for j in dict.fromkeys(nearest):
        for text in [source.sentences[j], *clauses(source.sentences[j])]:
            if any(words and all(_written_inflected(w[:6], said) for w in words) for words in governed(text)):
                return text
    return ""


def _written_inflected(stem: str, said: set[str]) -> bool:
    """A stem the claim writes, or writes inflected: one of four letters or more that the other
    extends by one or two letters ("zoek" and "zoekt", "work" and "works"; not "java" and
    "javasc", a stem cut at six letters of a longer word)."""
    return stem in said or (len(stem) >= 4 and any(_inflects(stem, s) or _inflects(s, stem) for s in said))


def _inflects(short: str, long: str) -> bool:
    """``long`` is ``short`` and one or two letters, and was not cut at six letters."""
    return len(short) >= 4 and long.startswith(short) and 0 < len(long) - len(short) <= 2 and len(long) < 6

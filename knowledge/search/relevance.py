"""Whether a hit is good enough to answer from (fail closed: no answer beats a guess).

The measurements behind the numbers are in BENCHMARKS.md, "Relevance floor".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.conf import settings

from knowledge.embedders import Embedder
from knowledge.topics import owner_references
from text.words import words

if TYPE_CHECKING:
    from knowledge.search import SearchHit

# How much a lexical match lowers the relevance floor: within a language, across languages, and
# for a chunk that holds every one of the visitor's (two or more) words.
SAME_LANGUAGE_LEXICAL = 0.03
CROSS_LANGUAGE_LEXICAL = 0.05
ALL_WORDS_LEXICAL = 0.05
# A passage the full text found only by a translation of the question's words lowers the floor
# like a match of the visitor's own word when the second model (trained apart from the primary)
# finds it too: its cosine at most the second model's ``second_margin`` below that model's own
# floor (a model without a margin never confirms). Across languages the primary's cosine drops
# even for the passage that answers, and a model's guess at a translation alone is too weak a sign.
# A question about the owner (``about_owner``) asks about the knowledge base's one subject, so a
# passage needs a little less semantic evidence; whether one of its sentences answers is still
# the model's (or the offline twin's sentence choice's) to decide. Fail closed: the smallest
# relaxation measured to help (BENCHMARKS.md, "Relevance floor").
ABOUT_OWNER_LEXICAL = 0.03


def about_owner(question: str, owner: str) -> bool:
    """Whether a question asks about the owner: it names them ("Where did Noor study?") or
    speaks of them in the third person ("Has he worked abroad?", "Wat kost ze per dag?")."""
    return not owner_references(owner).isdisjoint(words(question))


def relevance(hits: list[SearchHit], embedders: Sequence[Embedder], question: str) -> list[bool]:
    """``is_relevant`` for each hit of one search with ``embedders`` (primary first) for
    ``question`` (the visitor's words: whether they ask about the owner is read once). The search
    tool, the admin's test page and the retrieval eval all decide this way."""
    owner_asked = about_owner(question, settings.TWIN_OWNER_NAME)
    second = embedders[1] if len(embedders) > 1 else None
    return [is_relevant(hit, embedders[0], owner_asked=owner_asked, second=second) for hit in hits]


def is_relevant(hit: SearchHit, embedder: Embedder, *, owner_asked: bool = False,
                second: Embedder | None = None) -> bool:
    """Whether a hit is good enough to answer from (fail closed: no answer beats a guess).

    Cosine scores of one model bunch together, so the floor is per model, and other evidence
    lowers it a little: a passage sharing the question's words needs less semantic evidence,
    and so does one that two rankings (the models, full text, headings) both put in their top 3
    (off-topic questions get scattered rankings), or one holding every word of the question
    (measured with ``manage.py eval_retrieval``), and so does a question about the owner
    (``owner_asked``: ``about_owner``). A full-text match by a translation of the question's
    words counts as lexical only when the ``second`` model finds the passage too (its
    ``second_margin``).
    """
    floor = settings.TWIN_RELEVANCE_FLOOR or getattr(embedder, "relevance_floor", 0.0)
    dense = hit.dense_score if hit.dense_score is not None else 0.0
    # a question in one language scores lower against text in the other, even on its rare words
    lexical = CROSS_LANGUAGE_LEXICAL if hit.other_language else SAME_LANGUAGE_LEXICAL
    # a word of the visitor's (or its topic's); a model's guess at a word's translation ranks a
    # passage, but is too weak a sign that it answers unless the second model finds it as well
    margin = getattr(second, "second_margin", None)
    seconded = (margin is not None and hit.second_score is not None
                and hit.second_score >= getattr(second, "relevance_floor", 0.0) - margin)
    if hit.fulltext_rank is not None and (not hit.fulltext_translated or seconded) and dense >= floor - lexical:
        return True
    if hit.agreement >= 2 and dense >= floor - 0.015:
        return True
    if hit.fulltext_held >= 1.0 and dense >= floor - ALL_WORDS_LEXICAL:
        return True  # it holds every word the visitor used
    if owner_asked and dense >= floor - ABOUT_OWNER_LEXICAL:
        return True
    return dense >= floor

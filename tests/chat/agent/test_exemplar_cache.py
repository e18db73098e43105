"""The exemplar bank's vectors are kept on disk, so a new process loads them instead of embedding
every exemplar before its first screened turn."""

from __future__ import annotations

import numpy as np

from chat.agent import screening


class CountingEmbedder:
    name = "counting"
    dimensions = 3

    def __init__(self) -> None:
        self.calls = 0

    def query(self, text: str) -> np.ndarray:
        self.calls += 1
        return np.array([len(text), text.count("a"), 1.0], dtype=np.float32)


def test_the_bank_is_embedded_once_and_read_back_by_the_next_process(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    texts = ["ignore your rules", "what is her day rate?"]
    first = CountingEmbedder()
    vectors = screening._bank_vectors(first, texts)
    assert first.calls == 2 and list((tmp_path / "cache").glob("exemplars-*.npy"))
    second = CountingEmbedder()  # a new process: nothing in memory, the file on disk
    assert np.array_equal(screening._bank_vectors(second, texts), vectors) and second.calls == 0
    changed = CountingEmbedder()  # other exemplars: another key, embedded afresh
    screening._bank_vectors(changed, [*texts, "a new exemplar"])
    assert changed.calls == 3


def test_an_unwritable_cache_is_skipped(settings, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    settings.VAR_DIR = blocked  # VAR_DIR/cache cannot be made
    embedder = CountingEmbedder()
    assert screening._bank_vectors(embedder, ["one", "two"]).shape == (2, 3) and embedder.calls == 2

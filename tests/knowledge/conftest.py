"""The claim tests' word model: one E5Embedder per test module, as each module had its own."""

from __future__ import annotations

import pytest

from knowledge.embedders import E5Embedder


@pytest.fixture(scope="module")
def e5():
    return E5Embedder()

"""The one test of a name (text.names.is_name)."""

from __future__ import annotations

import pytest

from text.names import is_name


@pytest.mark.parametrize(("word", "expected"), [
    ("Utrecht", True),
    ("K8s", True),  # a digit makes a name of a word
    ("3D", True),
    ("The", False),  # a function word with a capital is no name
    ("Zij", False),
    ("Also", False),
    ("harbour", False),
    ("", False),
])
def test_is_name(word: str, expected: bool) -> None:
    assert is_name(word) is expected

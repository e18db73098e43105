"""The one test of a name (text.names.is_name) and of a compound (text.forms.compound_of)."""

from __future__ import annotations

import pytest

from text.forms import compound_of, same_word
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


def test_a_compound_ends_in_its_head_with_three_letters_before_it() -> None:
    assert compound_of("avondschool", "school")
    assert not compound_of("schoolbord", "school")  # the head ends it, or it is no compound
    assert not compound_of("deschool", "school")  # two letters before it are no word
    assert not compound_of("salarisrate", "rate")  # an English ending that only looks like a head
    assert compound_of("kantoorboek", "boek")
    assert not compound_of("kantoorboek", "boek", shortest=6)  # the thesaurus wants longer heads
    assert same_word("kantoorboek", "boek") and not same_word("salarisrate", "rate")

"""The one test of a name (text.names.is_name) and of a compound (text.forms.compound_of), and the
word lists they read from text/data."""

from __future__ import annotations

import pytest

from text.forms import compound_of, same_word, stem
from text.lexicon import shared
from text.names import PARTICLES, is_name, name_words


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


def test_irregular_forms_and_particles_are_read_from_the_data_files() -> None:
    assert shared().groups("forms.irregular")[0] == ("build", "built")
    assert stem("taught") == stem("teach") and stem("geschreven") == stem("schrijf")
    assert {"van", "der", "da", "bin"} <= PARTICLES
    assert name_words("Ana da Silva") == ["ana", "silva"]

"""An amount of money, the one price pattern of the importer and the offline answerer."""

from __future__ import annotations

import pytest

from text.numbers import MONEY, quantities


@pytest.mark.parametrize("text", ["Een sessie kost € 180.", "Daarna 650 € per dag.", "about $40 each",
                                  "EUR 1.250 in total", "zo'n 2.400,- euro", "3 million dollars", "12k GBP"])
def test_an_amount_in_a_currency_is_money(text):
    assert MONEY.search(text)


@pytest.mark.parametrize("text", ["We served 180 schools.", "Since 2019 in Zwolle.",
                                  "3 million visitors"])
def test_a_figure_without_a_currency_is_none(text):
    assert not MONEY.search(text)


def test_the_scale_of_an_amount_is_read():
    assert MONEY.search("a budget of 4 miljoen euro")["scale"] == "miljoen"
    assert MONEY.search("€ 75 an hour")["scale"] is None


def test_tens_and_units_written_as_words_are_one_number_in_both_languages():
    assert quantities("Thirty-six runners finished").values == {36.0}
    assert quantities("sixty two seats").values == {62.0}
    assert quantities("zesendertig lopers, drieënvijftig stoelen").values == {36.0, 53.0}
    assert quantities("twenty chairs and four tables").values == {20.0, 4.0}  # two numbers, not one


def test_a_number_word_times_a_scale_word_is_one_number_in_both_languages():
    assert quantities("fourteen hundred bicycles").values == {1400.0}
    assert quantities("three thousand seedlings").values == {3000.0}
    assert quantities("vierduizend tulpen en zeshonderd bollen").values == {4000.0, 600.0}
    assert quantities("negen honderd meter").values == {900.0}
    assert quantities("a hundred chairs").values == {100.0}  # a scale word alone keeps its value


def test_digits_glued_to_letters_are_a_name_not_a_quantity():
    assert quantities("a 5G modem and an MP4 file on the X7 board").values == frozenset()
    assert quantities("een 3D-printer").values == frozenset()

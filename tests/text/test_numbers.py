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

from __future__ import annotations

import pytest

from chat.lang import detect_language


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Where did she study?", "en"),
        ("Waar heeft ze gestudeerd?", "nl"),
        # the function words tie; the spelling tells
        ("Is Sam beschikbaar in maart?", "nl"),
        ("Is Sam available in March?", "en"),
    ],
)
def test_detects_the_visitors_language(text, lang):
    assert detect_language(text) == lang


@pytest.mark.parametrize("text", ["Ledgerline?", "Python", "tom@example.com"])
def test_falls_back_to_the_page_language_when_nothing_tells(text):
    assert detect_language(text) == "en"
    assert detect_language(text, "nl") == "nl"

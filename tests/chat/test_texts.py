"""Every visitor-facing sentence exists in English and Dutch, from one place (chat/texts.py and
the compiled catalogues), and follows the visitor's language."""

from __future__ import annotations

import re

import polib
import pytest
from django.utils import translation

from chat import texts
from twinsite import catalogues

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def english(key: str) -> str:
    with translation.override("en"):
        return str(texts.TEXTS[key])


@pytest.mark.parametrize("key", sorted(texts.TEXTS))
def test_every_sentence_has_a_dutch_translation_with_the_same_placeholders(key):
    dutch = texts.text(key, "nl", owner="{owner}", name="{name}", reason="{reason}", max="{max}",
                       seconds="{seconds}", n="{n}", title="{title}", when="{when}")
    assert dutch != english(key) or key in {"starter.project"}, f"{key} is not translated"
    assert set(PLACEHOLDER.findall(dutch)) == set(PLACEHOLDER.findall(english(key)))


def test_the_catalogues_compile_and_hold_nothing_fuzzy_or_untranslated():
    written = catalogues.compile_all()
    assert {p.parent.parent.name for p in written} == {"en", "nl"}
    dutch = polib.pofile(str(catalogues.LOCALE / "nl" / "LC_MESSAGES" / "django.po"))
    assert dutch.percent_translated() == 100
    assert catalogues.problems(dutch) == []


def test_a_broken_translation_is_refused(tmp_path):
    po = polib.POFile()
    po.append(polib.POEntry(msgid="Wait {seconds} seconds.", msgstr="Wacht {seconden} seconden."))
    (tmp_path / "nl" / "LC_MESSAGES").mkdir(parents=True)
    po.save(str(tmp_path / "nl" / "LC_MESSAGES" / "django.po"))
    with pytest.raises(SystemExit, match="placeholders differ"):
        catalogues.compile_all(tmp_path)


def test_language_follows_the_switch_cookie_then_the_browser():
    scope = {"headers": [(b"accept-language", b"nl-BE,nl;q=0.9,en;q=0.5")], "cookies": {}}
    assert texts.language_from_scope(scope) == "nl"
    assert texts.language_from_scope({**scope, "cookies": {"django_language": "en"}}) == "en"
    assert texts.language_from_scope({"headers": [(b"accept-language", b"fr-FR")]}) == "en"
    assert texts.language("de") == "en" and texts.language("nl-NL") == "nl"


def test_the_page_texts_carry_every_ui_and_error_sentence_with_the_owner_filled_in(settings):
    settings.TWIN_OWNER_NAME = "Mira Jansen"
    page = texts.page_texts("nl")
    assert page["ui.new"] == "Nieuw gesprek" and "{owner}" not in page["ui.title"]
    assert "Mira Jansen" in page["ui.title"] and "{seconds}" in page["error.rate_limited"]
    assert set(page) == {k for k in texts.TEXTS if k.startswith(("ui.", "error.", "card."))}


@pytest.mark.django_db
def test_a_waiting_request_says_roughly_when_the_owner_decides(settings, client):
    settings.TWIN_OWNER_NAME = "Mira"
    settings.TWIN_OWNER_REPLY_HOURS = 0
    assert texts.page_texts("en")["card.pending"] == ("Your message is waiting for Mira's approval. "
                                                      "Nothing has been sent yet.")
    settings.TWIN_OWNER_REPLY_HOURS = 24
    assert texts.page_texts("en")["card.pending"].endswith("sent yet. Mira usually decides within about 24 hours.")
    assert texts.page_texts("nl")["card.pending"].endswith("Mira beslist meestal binnen ongeveer 24 uur.")
    settings.TWIN_OWNER_REPLY_HOURS = 1
    assert texts.reply_window("en") == "1 hour"
    settings.TWIN_OWNER_REPLY_HOURS = 60  # rounded up: "2 days" would promise too much
    assert (texts.reply_window("en"), texts.reply_window("nl")) == ("3 days", "3 dagen")
    # the page hands the card's sentence to its script
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="nl").content.decode()
    assert "Mira beslist meestal binnen ongeveer 3 dagen." in page

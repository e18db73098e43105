"""Getting started in a real browser, in English and in Dutch: a new owner logs in with the
password ``ensure_admin`` printed, sees what is left to set up, sends a test notice with the
button, chooses a password of their own, and each of those steps turns to done."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from tests.e2e.test_chat_page import SHOTS, Watch, launch, login, needs_browser

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = {
    "en": {"title": "Getting started", "left": "6 of 6 steps left", "offline": "Offline mode: answers quote your "
           "documents.", "send": "Send a test", "arrived": "e-mail to you@example.org: arrived.",
           "sent": "The test notice went out through every channel", "change": "Change the password",
           "done": "done", "todo": "to do", "own": "Your own."},
    "nl": {"title": "Aan de slag", "left": "nog 6 van 6 stappen", "offline": "Offline modus: antwoorden citeren je "
           "documenten.", "send": "Stuur een test", "arrived": "e-mail aan you@example.org: aangekomen.",
           "sent": "Het testbericht is via elk kanaal verstuurd", "change": "Wachtwoord wijzigen",
           "done": "klaar", "todo": "te doen", "own": "Je eigen."},
}


@pytest.fixture(params=["en", "nl"])
def language(request, monkeypatch):
    """The admin's language for the server started after it (``TWIN_OWNER_LANGUAGE``)."""
    monkeypatch.setenv("TWIN_OWNER_LANGUAGE", request.param)
    monkeypatch.setenv("TWIN_OWNER_EMAIL", "you@example.org")
    monkeypatch.delenv("TWIN_EMBED_ORIGINS", raising=False)
    return request.param


def generated_password() -> str:
    out = io.StringIO()
    call_command("ensure_admin", stdout=out)
    return re.search(r"generated password: (\S+)", out.getvalue())[1]


@needs_browser
def test_a_new_owner_works_through_getting_started(language, server, settings):
    from playwright.sync_api import sync_playwright

    settings.TWIN_ADMIN_PASSWORD = ""
    password = generated_password()
    words = WORDS[language]
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_context(viewport={"width": 1200, "height": 1100}, locale="en-GB").new_page()
        watch = Watch(page)
        login(page, server, "admin", password, then="/admin/")
        checklist = page.locator("#getting-started")
        checklist.wait_for()
        assert checklist.locator("h2").inner_text().startswith(words["title"])
        assert words["left"] in checklist.locator("h2").inner_text()
        assert checklist.locator(".step-todo").count() == 6
        assert words["offline"] in checklist.locator("#step-model").inner_text()
        snippet = checklist.locator("#step-embed .step-snippet").inner_text()
        assert re.fullmatch(rf'<script src="http://[^"]+/embed\.js" data-lang="{language}" async></script>', snippet)
        assert "TWIN_EMBED_ORIGINS=https://your-site.example" in checklist.locator("#step-embed").inner_text()
        # the password link leads to Django's own form
        assert checklist.locator("#step-password a").get_attribute("href") == "/admin/password_change/"

        checklist.get_by_role("button", name=words["send"]).click()  # a POST with the page's CSRF token
        page.wait_for_url(re.compile(r"/admin/#getting-started$"))
        assert words["sent"] in page.locator(".messagelist").inner_text()
        notices = page.locator("#step-notices")
        assert words["arrived"] in notices.inner_text()
        assert notices.get_attribute("class").split() == ["step", "step-done"]
        assert words["done"] in notices.locator(".step-state").inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        checklist.screenshot(path=str(SHOTS / f"19-getting-started-{language}.png"))

        checklist.locator("#step-password a").click()
        page.fill("#id_old_password", password)
        page.fill("#id_new_password1", "a-password-the-owner-chose-7")
        page.fill("#id_new_password2", "a-password-the-owner-chose-7")
        page.locator("input[type=submit]").click()
        page.goto(server + "/admin/")
        assert page.locator("#step-password").get_attribute("class").split() == ["step", "step-done"]
        assert words["own"] in page.locator("#step-password").inner_text()
        assert page.locator("#getting-started .step-todo").count() == 4  # name, content, model, embed
        assert watch.problems == []
        browser.close()

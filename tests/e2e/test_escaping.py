"""Stored hostile Markdown and HTML, from a visitor and from a model, shown everywhere it is shown
(the chat page live and reloaded, the staff "why" panel, the admin) in a real browser: no script
runs, no element is made from it, and it reads as the text it is."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from chat.models import AgentTrace, Message
from tests.e2e.test_chat_page import ask, launch, login, needs_browser, visitor_page
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text
from tests.faults.conftest import Daphne, fake_provider_env, twin_env

pytestmark = pytest.mark.django_db(transaction=True)
JS = "document.title='pwned'"
# Every way a Markdown renderer or a template could be talked into making an element or a link.
HOSTILE = (f'<script>{JS}</script> <img src=x onerror="{JS}"> <svg onload="{JS}"></svg> '
           f'<iframe src="javascript:{JS}"></iframe> <details open ontoggle="{JS}">x</details> '
           f"[click](javascript:{JS}) ![pic](javascript:{JS}) <javascript:{JS}> "
           f"[ref][r] [entity](&#106;avascript:{JS}) <a href=\"javascript:{JS}\">a</a> "
           f"[source: <img src=y onerror=\"{JS}\">]\n\n[r]: javascript:{JS}\n\n"
           f"<div onmouseover=\"{JS}\">**bold**</div>")
QUESTION = f'Is <b>this</b> <img src=q onerror="{JS}"> shown as text? [q](javascript:{JS})'
# What the payload would make if it were taken as HTML or as a link (the pages' own elements,
# such as the why panel's <details>, are not in it).
MADE = ("img[src=x], img[src=y], img[src=q], iframe, svg, details[ontoggle], [onerror], [onload], [ontoggle], "
        "[onmouseover], a[href^='javascript' i], script:not([src]):not([type='application/json'])")


def assert_inert(page, scope: str, made: str = MADE) -> None:
    assert page.title() != "pwned"
    assert page.locator(scope).locator(made).count() == 0, page.locator(scope).inner_html()


@needs_browser
def test_hostile_markdown_and_html_from_a_visitor_and_a_model_never_runs(tmp_path):
    from django.contrib.auth.models import User

    User.objects.create_superuser("owner", password="owner-pass-123")
    with FakeOpenAI() as fake:
        fake.add(Reply(chunks=sse_text(*(HOSTILE[i:i + 17] for i in range(0, len(HOSTILE), 17)))))
        fake.add(Reply(chunks=sse_text("Yes, as text.")))
        server = Daphne(twin_env(**fake_provider_env(fake.base_url)), tmp_path / "daphne.log")
        try:
            browse(server)
        finally:
            server.stop()
    assert Message.objects.filter(role="user", content=QUESTION).exists()


def browse(server: Daphne) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        page, watch = visitor_page(browser, locale="en-GB")
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        login(page, server.url, "owner", "owner-pass-123")  # staff: the why panel too
        ask(page, "What does she build?")
        page.locator(".msg.assistant[data-outcome]").first.wait_for(timeout=30_000)
        ask(page, QUESTION)
        page.locator(".msg.assistant[data-outcome]").nth(1).wait_for(timeout=30_000)
        assert_inert(page, "#log", MADE + ", #log b, #log details")  # answers make no <b> or <details>
        answer = page.locator(".msg.assistant").first.locator(".text").inner_text()
        assert "<script>" in answer and "onerror" in answer
        assert page.locator(".msg.user").last.locator(".text").inner_text() == QUESTION

        watch.settle()
        page.reload()  # the stored versions, rendered again
        page.locator("#send:not([disabled])").wait_for()
        assert_inert(page, "#log", MADE + ", #log b, #log details")
        assert page.locator(".msg.user").last.locator(".text").inner_text() == QUESTION
        page.locator(".msg.assistant .why-open").first.click()
        page.locator("#why-panel .why-facts").wait_for()
        assert_inert(page, "#why-panel")
        assert "<script>" in page.locator("#why-panel").text_content()  # in the raw chunks, as text

        conversation = page.locator("#chat").get_attribute("data-conversation")
        with ThreadPoolExecutor(1) as thread:  # the ORM is not for Playwright's event-loop thread
            trace = thread.submit(lambda: AgentTrace.objects.get(message__content__contains="<script>").pk).result()
        for path in ["/admin/chat/conversation/", f"/admin/chat/conversation/{conversation}/change/",
                     "/admin/chat/message/", "/admin/chat/turnlog/", f"/admin/chat/agenttrace/{trace}/change/",
                     "/admin/chat/unansweredquestion/"]:
            page.goto(server.url + path)
            assert_inert(page, "#content")
        page.goto(server.url + f"/admin/chat/conversation/{conversation}/change/")
        assert "<script>document.title" in page.locator("#content").inner_text()
        assert watch.problems == [] and dialogs == []  # no CSP violation: nothing even tried to run
        browser.close()

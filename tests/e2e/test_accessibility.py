"""axe-core 4 (the engine as axe-playwright-python ships it) on the pages visitors see, in a real
browser: the chat page in light and dark, before and after an answer, and a cited source page.
No serious or critical violation; the rule the chat page once broke (the language buttons'
accessible name without their visible "EN"/"NL") is named so its return is plain."""

from __future__ import annotations

import pytest

from tests.e2e.test_chat_page import ask, launch, needs_browser

pytestmark = pytest.mark.django_db(transaction=True)
SERIOUS = ("serious", "critical")


def _violations(page) -> list[tuple[str, str, int]]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [(v["id"], v["impact"], len(v["nodes"])) for v in results.response["violations"]
            if v["impact"] in SERIOUS]


@needs_browser
def test_the_chat_page_and_a_source_page_have_no_serious_axe_violation(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        for scheme in ("light", "dark"):
            # axe is injected by evaluating its script: the page's CSP is bypassed for the test only
            page = browser.new_context(locale="en-GB", color_scheme=scheme, bypass_csp=True).new_page()
            page.goto(server + "/")
            page.locator("#send:not([disabled])").wait_for()
            assert _violations(page) == [], scheme
            ask(page, "What has she built?")
            answer = page.locator(".msg.assistant").last
            answer.locator(".sources a").first.wait_for(timeout=30_000)
            page.locator("#send:not([disabled])").wait_for()
            found = _violations(page)
            assert "label-content-name-mismatch" not in {rule for rule, _, _ in found}
            assert found == [], scheme
            source = answer.locator(".sources a").first.get_attribute("href")
            page.goto(server + source)
            assert _violations(page) == [], (scheme, source)
        browser.close()

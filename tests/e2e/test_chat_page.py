"""The chat page in a real browser (Debian's Chromium driven by Playwright) against a real
daphne server on a free loopback port, using the test database."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


# Without Debian's chromium only these tests are skipped, loudly; CI sets TWIN_REQUIRE_BROWSER=1
# (in .ci/run), which turns the skip into a failure.
if not Path(CHROMIUM).exists() and os.environ.get("TWIN_REQUIRE_BROWSER") == "1":
    raise RuntimeError("TWIN_REQUIRE_BROWSER=1 but Debian's chromium is not installed (apt-get install chromium)")
needs_browser = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                   reason="BROWSER TESTS SKIPPED: Debian's chromium is not installed "
                                          "(apt-get install chromium; .ci/run installs it)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(kb, tmp_path):
    sd = connection.settings_dict
    port = free_port()
    env = dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
               f"{sd['NAME']}", TWIN_PROVIDER="offline", DJANGO_SETTINGS_MODULE="twinsite.settings")
    log = (tmp_path / "daphne.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "twinsite.asgi:application"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        if process.poll() is not None:
            raise RuntimeError((tmp_path / "daphne.log").read_text())
        time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def worker(server, tmp_path):
    """The background worker, as `make run` starts it beside daphne."""
    sd = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
               f"{sd['NAME']}", TWIN_PROVIDER="offline", DJANGO_SETTINGS_MODULE="twinsite.settings",
               TWIN_WORKER_SWEEP_SECONDS="2")
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen([sys.executable, "manage.py", "twin_worker", "--interval", "0.2"], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    yield process
    process.terminate()
    process.wait(timeout=20)


@needs_browser
def test_question_streams_token_by_token_with_a_citation_and_survives_reload(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        frames: list[dict] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))))
        page.goto(server + "/")
        assert page.locator("#mode").inner_text() == "offline mode"
        page.locator("#send:not([disabled])").wait_for()  # locators: the page's CSP forbids eval
        page.fill("#question", "What has she built?")
        page.press("#question", "Enter")
        answer = page.locator(".msg.assistant").last
        answer.locator(".sources a").first.wait_for(timeout=30_000)
        page.locator("#send:not([disabled])").wait_for()
        page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)

        tokens = [f["text"] for f in frames if f["type"] == "token"]
        assert len(tokens) >= 10  # streamed as many frames, not one blob
        assert [f["type"] for f in frames][-2:] == ["citations", "done"]
        assert "trace" not in {f["type"] for f in frames}  # no diagnostics for visitors
        shown = answer.locator(".text").inner_text()
        streamed = "".join(tokens)
        assert "[source: " in streamed and "[source: " not in shown  # markers became numbers
        assert shown.startswith(streamed.split("[source:")[0].strip()) and "[1]" in shown
        marker = answer.locator(".text sup a").first
        assert marker.get_attribute("href") == "#" + answer.locator(".sources li").first.get_attribute("id")
        assert answer.locator(".sources a").first.get_attribute("href").startswith("/sources/")
        assert answer.locator(".why").count() == 0

        # rating goes through the JSON API with the CSRF token; a second rating replaces the first
        answer.get_by_role("button", name="Helpful", exact=True).click()
        answer.locator('.rate button[aria-pressed="true"]').wait_for()
        answer.get_by_role("button", name="Not helpful").click()
        answer.locator('.rate button[aria-pressed="true"]', has_text="Not helpful").wait_for()

        answer_sources = answer.locator(".sources a").count()
        href = answer.locator(".sources a").first.get_attribute("href")
        source = browser.new_page()
        assert source.goto(server + href).status == 200  # the citation leads to a page that exists
        source.close()

        page.reload()
        assert page.locator(".msg.user").last.inner_text() == "What has she built?"
        reloaded = page.locator(".msg.assistant").last
        assert reloaded.locator(".text").inner_text() == shown  # the same numbered answer after a reload
        assert reloaded.locator(".sources a").count() == answer_sources
        browser.close()


@needs_browser
def test_owner_approves_in_the_admin_and_the_open_chat_updates_without_a_reload(server, worker, tmp_path):
    from django.contrib.auth.models import User
    from playwright.sync_api import sync_playwright

    from approvals.models import ContactMessage

    User.objects.create_superuser("owner", password="owner-pass-123")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        visitor = browser.new_context().new_page()
        visitor.goto(server + "/")
        visitor.locator("#send:not([disabled])").wait_for()
        visitor.fill("#question", "Kun je een bericht doorsturen? Ik ben Anna, anna@example.com.")
        visitor.press("#question", "Enter")
        visitor.locator(".approval.pending").wait_for(timeout=30_000)
        visitor.locator("#send:not([disabled])").wait_for()
        assert "er is nog niets verstuurd" in visitor.locator(".msg.assistant").last.inner_text()

        owner = browser.new_context().new_page()
        owner.goto(server + "/admin/login/")
        owner.fill("#id_username", "owner")
        owner.fill("#id_password", "owner-pass-123")
        owner.click("input[type=submit]")
        assert "1 contact request waiting" in owner.locator("#pending-approvals").inner_text()
        owner.click("#pending-approvals a")
        owner.locator("#result_list tbody tr a").first.click()
        owner.click("input[name=_approve]")
        assert "approved" in owner.locator(".messagelist").inner_text()

        visitor.locator(".approval.approved").wait_for(timeout=30_000)  # pushed by the worker
        visitor.locator(".msg.assistant").nth(1).wait_for()
        visitor.screenshot(path=str(tmp_path / "approved.png"), full_page=True)
        assert "heeft je bericht goedgekeurd" in visitor.locator(".msg.assistant").last.inner_text()
        browser.close()
    assert ContactMessage.objects.count() == 1


@needs_browser
def test_staff_open_the_why_panel_and_visitors_have_none(server, tmp_path):
    from django.contrib.auth.models import User
    from playwright.sync_api import sync_playwright

    User.objects.create_user("staffer", password="staff-pass-123", is_staff=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        staff = browser.new_context().new_page()
        staff.goto(server + "/admin/login/?next=/")
        staff.fill("#id_username", "staffer")
        staff.fill("#id_password", "staff-pass-123")
        staff.click("input[type=submit]")
        staff.locator("#send:not([disabled])").wait_for()
        staff.fill("#question", "What has she built?")
        staff.press("#question", "Enter")
        staff.locator(".msg.assistant .why-open").first.click()
        panel = staff.locator("#why-panel")
        panel.locator("text=Why this answer").wait_for()
        assert "search_knowledge" in panel.inner_text() and "What has she built?" in panel.inner_text()
        staff.screenshot(path=str(tmp_path / "why-panel.png"), full_page=True)

        visitor = browser.new_context().new_page()
        visitor.goto(server + "/")
        visitor.locator("#send:not([disabled])").wait_for()
        starter = visitor.locator("button.starter").first
        question = starter.inner_text()
        starter.click()  # a starter question drawn from the knowledge base, asked with one click
        visitor.locator(".msg.assistant .sources a").first.wait_for()
        assert visitor.locator(".msg.user").last.inner_text() == question
        assert visitor.locator(".why-open").count() == 0 and visitor.locator("#why-panel").count() == 0
        browser.close()

"""The embeddable twin in a real browser: a static page on another local origin (``localhost``,
while Twinsite is served on ``127.0.0.1``: another site) adds the launcher with one script tag."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chat.models import Conversation
from tests.e2e.test_chat_page import (  # noqa: F401 (fixtures)
    Watch,
    launch,
    needs_browser,
    server,
    shot,
)

pytestmark = pytest.mark.django_db(transaction=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HostSite:
    """A plain website on localhost:<port> whose page carries the launcher's script tag."""

    def __init__(self) -> None:
        self.port = free_port()
        self.twin = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                body = (f'<!doctype html><html lang="en"><head><title>Mira\'s blog</title></head><body>'
                        f"<h1>Mira's blog</h1><p>A static page.</p>"
                        f'<script src="{site.twin}/embed.js" data-lang="nl" async></script></body></html>').encode()
                if self.path == "/favicon.ico":
                    body = b""
                self.send_response(200 if self.path in ("/", "/index.html", "/favicon.ico") else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}/"


@pytest.fixture
def sites(monkeypatch):
    allowed, other = HostSite(), HostSite()
    monkeypatch.setenv("TWIN_EMBED_ORIGINS", f"http://localhost:{allowed.port}")
    yield allowed, other
    allowed.httpd.shutdown()
    other.httpd.shutdown()


@needs_browser
def test_the_widget_on_another_site_streams_an_answer_keeps_the_conversation_and_drafts_a_message(sites, server):  # noqa: F811
    from playwright.sync_api import sync_playwright

    from approvals.models import PendingApproval

    allowed, other = sites
    allowed.twin = other.twin = server
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_context(locale="nl-NL").new_page()
        watch = Watch(page)
        page.goto(allowed.url)
        launcher = page.get_by_role("button", name="Vraag het de tweeling van Mira Jansen")
        launcher.click()
        chat = page.frame_locator("iframe")
        chat.locator("#send:not([disabled])").wait_for(timeout=30_000)
        chat.locator("#question").fill("Wat is haar dagtarief?")
        chat.locator("#question").press("Enter")
        answer = chat.locator(".msg.assistant").last
        answer.locator(".sources a").first.wait_for(timeout=30_000)
        assert "1.100" in answer.inner_text()
        answer.get_by_role("button", name="Nuttig", exact=True).click()  # feedback with the token, no cookie
        answer.locator('.rate button[aria-pressed="true"]').wait_for()
        shot(page, "12-embed-widget-nl")

        watch.settle()  # the rating's POST finishes before the host page reloads
        page.reload()  # the host page again: the same conversation, from the frame's own storage
        page.get_by_role("button", name="Vraag het de tweeling van Mira Jansen").click()
        chat = page.frame_locator("iframe")
        chat.locator(".msg.assistant").first.wait_for(timeout=30_000)
        assert "Wat is haar dagtarief?" in chat.locator(".msg.user").first.inner_text()
        chat.locator("#send:not([disabled])").wait_for(timeout=30_000)
        chat.locator("#question").fill("Kun je een bericht doorsturen? Ik ben Anna, anna@example.com.")
        chat.locator("#question").press("Enter")
        chat.locator(".approval.pending").wait_for(timeout=30_000)
        page.keyboard.press("Escape")  # keyboard: Escape closes the panel
        assert watch.problems == []

        refused = browser.new_context().new_page()
        refused.goto(other.url)  # a site not in TWIN_EMBED_ORIGINS: a clear refusal, no frame
        refused.get_by_role("button", name="Vraag het de tweeling van Mira Jansen").click()
        alert = refused.get_by_role("alert")
        alert.wait_for()
        assert "niet tonen" in alert.inner_text() and refused.locator("iframe").count() == 0
        shot(refused, "13-embed-refused-nl")
        browser.close()
    pending = PendingApproval.objects.get()
    assert pending.status == "pending" and pending.arguments["visitor_email"] == "anna@example.com"


def test_the_embedded_page_may_be_framed_only_by_the_listed_origins(client, kb, settings):
    settings.TWIN_EMBED_ORIGINS = ["https://mira.example"]
    boot = client.get("/embed/")
    assert "frame-ancestors 'self' https://mira.example" in boot["Content-Security-Policy"]
    assert "X-Frame-Options" not in boot
    page = client.get("/embed/?new=1&lang=nl")
    html = page.content.decode()
    assert page.status_code == 200 and 'data-embedded="1"' in html and '<html lang="nl">' in html
    assert "data-token" not in html and Conversation.objects.count() == 0  # nothing until the first question
    # the frame's first question: a conversation and its token, for the frame's own origin only
    assert client.post("/embed/start", HTTP_ORIGIN="https://evil.example").status_code == 403
    assert client.post("/embed/start").status_code == 403  # no Origin: not the frame
    started = client.post("/embed/start", HTTP_ORIGIN="http://testserver")
    assert started.status_code == 201 and Conversation.objects.count() == 1
    from chat.embed import conversation_from_token

    assert conversation_from_token(started.json()["token"]) == started.json()["conversation"]
    assert client.get("/").get("X-Frame-Options") == "DENY"  # the normal page is never framed
    allowed = client.get("/embed/config", HTTP_ORIGIN="https://mira.example").json()
    refused = client.get("/embed/config", HTTP_ORIGIN="https://evil.example")
    assert allowed["allowed"] is True and refused.json()["allowed"] is False
    assert refused["Access-Control-Allow-Origin"] == "https://evil.example"  # it may ask, and is told no
    script = client.get("/embed.js")
    assert script["Content-Type"].startswith("text/javascript") and len(script.content) < 10_000


def test_a_token_opens_its_conversation_only_when_posted_never_from_a_url(client, kb):
    """Conversation fixation: a link with someone's token must not show or continue their chat,
    and no URL (access logs, history) ever carries a token."""
    from chat.embed import conversation_token
    from chat.services import conversation_create

    theirs = conversation_create()
    token = conversation_token(theirs.pk)
    for url in (f"/embed/?t={token}", f"/embed/?new=1&t={token}"):
        page = client.get(url)
        assert str(theirs.pk) not in page.content.decode() and token not in page.content.decode()
        assert page["Cache-Control"] == "no-store"
    # another site's page that auto-submits a form with someone's token opens nothing
    forged = client.post("/embed/?lang=en", {"t": token}, HTTP_ORIGIN="https://evil.example")
    assert str(theirs.pk) not in forged.content.decode()
    assert str(theirs.pk) not in client.post("/embed/?lang=en", {"t": token}).content.decode()  # no Origin
    opened = client.post("/embed/?lang=en", {"t": token}, HTTP_ORIGIN="http://testserver")
    html = opened.content.decode()
    assert opened.status_code == 200 and f'data-conversation="{theirs.pk}"' in html
    assert 'data-token="' in html and opened["Cache-Control"] == "no-store"
    tampered = client.post("/embed/", {"t": token[:-2] + "xx"}, HTTP_ORIGIN="http://testserver")
    assert str(theirs.pk) not in tampered.content.decode()
    reply = client.post("/api/feedback", {"message_id": 1, "rating": 1}, content_type="application/json",
                        HTTP_X_TWIN_TOKEN="forged")
    assert reply.status_code == 403 and reply.json()["error"]["code"] == "bad_token"


def test_an_embed_token_expires_after_its_days(kb, settings, monkeypatch):
    import time

    from chat.embed import conversation_from_token, conversation_token
    from chat.services import conversation_create

    conversation = conversation_create()
    token = conversation_token(conversation.pk)
    settings.TWIN_EMBED_TOKEN_DAYS = 7
    assert conversation_from_token(token) == str(conversation.pk)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 8 * 86_400)  # eight days on
    assert conversation_from_token(token) is None


async def test_the_socket_takes_the_token_as_a_subprotocol_not_from_its_url(kb):
    import base64
    import json

    from channels.db import database_sync_to_async
    from channels.testing import WebsocketCommunicator

    from chat.embed import conversation_token
    from chat.services import conversation_create
    from twinsite.asgi import application

    conversation = await database_sync_to_async(conversation_create)()
    token = conversation_token(conversation.pk)
    origin = [(b"origin", b"http://127.0.0.1:8000")]
    in_url = WebsocketCommunicator(application, f"/ws/chat/{conversation.pk}/?t={token}", headers=origin)
    assert (await in_url.connect())[0]
    assert json.loads(await in_url.receive_from(timeout=10))["code"] == "forbidden"
    await in_url.disconnect()
    encoded = base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    offered = WebsocketCommunicator(application, f"/ws/chat/{conversation.pk}/", headers=origin,
                                    subprotocols=["twinsite", f"twinsite-token.{encoded}"])
    connected, protocol = await offered.connect()
    assert connected and protocol == "twinsite"
    await offered.send_to(text_data=json.dumps({"type": "sync"}))
    assert json.loads(await offered.receive_from(timeout=10))["type"] == "history"
    await offered.disconnect()

"""How a notice reaches the owner: an e-mail (plain text and HTML, in ``TWIN_OWNER_LANGUAGE``)
and a webhook POST in one of three shapes (``TWIN_NOTIFY_FORMAT``):

- ``json``: Twinsite's own document (docs/NOTIFICATIONS.md), for a receiver of your own;
- ``ntfy``: ntfy's JSON publishing (``TWIN_NOTIFY_WEBHOOK`` is the topic's address, such as
  ``https://ntfy.sh/my-topic``; the JSON goes to the server's root with the topic in it);
- ``slack``: a Slack incoming webhook's ``text`` and ``blocks``.

Every POST is signed as Standard Webhooks (https://www.standardwebhooks.com/) signs:
``webhook-id`` (the notice's id, the same on every attempt), ``webhook-timestamp`` (Unix seconds
of this attempt) and ``webhook-signature: v1,<base64>``, the HMAC-SHA256 of
``<id>.<timestamp>.<raw body>`` keyed by ``TWIN_NOTIFY_WEBHOOK_SECRET`` (``whsec_`` and the key in
base64, as the spec's libraries take it; a secret without the prefix is the key as it is). A
receiver that rejects timestamps more than five minutes off cannot be sent a captured POST again
(docs/NOTIFICATIONS.md). ``Idempotency-Key`` repeats the id, and ``X-Twinsite-Signature:
sha256=<hex>`` (the body's HMAC alone, keyed by the secret's text: replayable) is kept for
receivers written before. Anything but a 2xx answer is a failure that ``digest.notices`` retries.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from urllib.parse import urlsplit, urlunsplit

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from digest.selectors import excerpt

TIMEOUT = httpx.Timeout(10.0, connect=5.0)  # per step: connecting, sending, each read
DEADLINE = 15.0  # seconds for the whole POST: a receiver that trickles its answer is cut off too
MESSAGE_CHARS = 1500  # of a visitor's message in a push notice; the e-mail and the admin have it whole
SLACK_SECTION_CHARS = 2900  # Slack refuses a section text over 3,000 characters
NTFY_MESSAGE_BYTES = 3800  # ntfy turns a message over 4,096 bytes into an attachment


class ReceiverRefused(Exception):
    """The receiver answered, but not with a 2xx."""


def send(channel: str, content: dict) -> None:
    """Send ``content`` (``digest.notices.notice_content``) through ``channel``; raises on failure."""
    with translation.override(settings.TWIN_OWNER_LANGUAGE):
        if channel == "email":
            email_message(content).send(fail_silently=False)
        else:
            webhook_post(content)


def signature(body: bytes, secret: str | None = None) -> str:
    """The signature receivers written before Standard Webhooks check: the body alone."""
    key = (secret or settings.TWIN_NOTIFY_WEBHOOK_SECRET).encode()
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def webhook_key(secret: str | None = None) -> bytes:
    """The HMAC key of a secret: ``whsec_<base64>`` decoded (Standard Webhooks), else its text."""
    secret = secret or settings.TWIN_NOTIFY_WEBHOOK_SECRET
    return base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode()


def standard_signature(message_id: str, timestamp: int, body: bytes, secret: str | None = None) -> str:
    """``webhook-signature``: ``v1,`` and the base64 HMAC-SHA256 of ``<id>.<timestamp>.<body>``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(webhook_key(secret), signed, hashlib.sha256).digest()).decode()


def webhook_host() -> str:
    return urlsplit(settings.TWIN_NOTIFY_WEBHOOK).hostname or "?"


def describe_error(exc: Exception) -> str:
    """The error as the admin shows it, with the webhook's address (a secret, for Slack) cut to its host."""
    text = f"{type(exc).__name__}: {exc}"
    if settings.TWIN_NOTIFY_WEBHOOK:
        text = text.replace(settings.TWIN_NOTIFY_WEBHOOK, f"<{webhook_host()}>")
    return text


# --- e-mail ------------------------------------------------------------------------------------

def email_subject(content: dict) -> str:
    requests = content["requests"]
    if content["kind"] == "test":
        return _("Test notice from your digital twin")
    if len(requests) == 1 and not content["more"]:
        name = excerpt(requests[0]["visitor_name"], 60) or _("A visitor")
        return _("%(name)s asks to reach you through your digital twin") % {"name": name}
    total = len(requests) + content["more"]
    return ngettext("%(n)d contact request waits for you", "%(n)d contact requests wait for you", total) % {"n": total}


def email_message(content: dict) -> EmailMultiAlternatives:
    context = {**content, "language": translation.get_language()}
    text = render_to_string("digest/notice.txt", context)
    message = EmailMultiAlternatives(
        subject=email_subject(content), body="\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n",
        to=[settings.TWIN_OWNER_EMAIL],
        headers={"Message-ID": f"<notice-{content['id']}@twinsite>", "Auto-Submitted": "auto-generated",
                 "X-Twinsite-Notice": content["id"]})
    message.attach_alternative(render_to_string("digest/notice.html", context), "text/html")
    return message


# --- webhooks ----------------------------------------------------------------------------------

def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(text: str) -> str:
    return _cut(str(text or "").strip(), MESSAGE_CHARS)


def json_document(content: dict) -> dict:
    keys = ("id", "visitor_name", "visitor_email", "message", "admin_url", "approve_url", "reject_url")
    return {
        "id": content["id"], "type": "test" if content["kind"] == "test" else "contact_requests",
        "created_at": content["created_at"].isoformat(), "owner": content["owner"], "title": email_subject(content),
        "admin_url": content["admin_url"], "more": content["more"],
        "requests": [{**{k: r[k] for k in keys}, "created_at": r["created_at"].isoformat(),
                      "expires_at": r["expires_at"].isoformat()} for r in content["requests"]],
    }


def _plain_lines(content: dict) -> list[str]:
    if content["kind"] == "test":
        return [_("Notices of contact requests reach you here.")]
    lines = []
    for r in content["requests"]:
        who = r["visitor_name"] or _("A visitor")
        lines.append(f"{who} <{r['visitor_email'] or '-'}>: {_short(r['message'])}")
    if content["more"]:
        lines.append(ngettext("and %(n)d more in the admin", "and %(n)d more in the admin",
                              content["more"]) % {"n": content["more"]})
    return lines


def ntfy_document(content: dict, topic: str) -> dict:
    """ntfy's JSON publishing: at most three buttons, so one request gets Approve and Reject,
    several get the admin; a tap on the notice opens the admin's list of waiting requests."""
    requests = content["requests"]
    actions = [{"action": "view", "label": _("Open the admin"), "url": content["admin_url"]}]
    if len(requests) == 1 and not content["more"]:
        actions = [{"action": "view", "label": _("Approve"), "url": requests[0]["approve_url"], "clear": True},
                   {"action": "view", "label": _("Reject"), "url": requests[0]["reject_url"], "clear": True},
                   *actions]
    message = "\n\n".join(_plain_lines(content)).encode()
    if len(message) > NTFY_MESSAGE_BYTES:
        message = message[: NTFY_MESSAGE_BYTES - 3] + "…".encode()
    return {"topic": topic, "title": email_subject(content), "message": message.decode(errors="ignore"),
            "tags": ["envelope"], "priority": 4, "click": content["admin_url"], "actions": actions}


def _slack_escape(text: str) -> str:
    """Slack's three control characters: a visitor's ``<!channel>`` or ``<url|label>`` stays text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_document(content: dict) -> dict:
    title = email_subject(content)
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": excerpt(title, 150)}}]
    if content["kind"] == "test":
        blocks.append({"type": "section", "text": {"type": "plain_text", "text": _plain_lines(content)[0]}})
    for r in content["requests"]:
        who = _slack_escape(excerpt(r["visitor_name"] or _("A visitor"), 200))
        email = _slack_escape(excerpt(r["visitor_email"] or "-", 300))
        quoted = "\n".join("> " + line for line in _slack_escape(r["message"]).splitlines() or [""])
        text = _cut(f"*{who}* ({email})\n{quoted}", SLACK_SECTION_CHARS)
        # verbatim: Slack leaves a visitor's "@channel" and addresses as they are written
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}})
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": _("Approve")}, "style": "primary",
             "url": r["approve_url"]},
            {"type": "button", "text": {"type": "plain_text", "text": _("Reject")}, "style": "danger",
             "url": r["reject_url"]},
            {"type": "button", "text": {"type": "plain_text", "text": _("Edit first, in the admin")},
             "url": r["admin_url"]}]})
    footer = _("Open the admin")
    if content["more"]:
        footer = _plain_lines(content)[-1]
    blocks.append({"type": "context", "elements": [
        {"type": "mrkdwn", "text": f"<{content['admin_url']}|{_slack_escape(footer)}>"}]})
    return {"text": _slack_escape(title), "blocks": blocks}


def webhook_request(content: dict) -> tuple[str, bytes, dict[str, str]]:
    """(address, raw body, headers) of the POST for ``TWIN_NOTIFY_FORMAT``."""
    url, shape = settings.TWIN_NOTIFY_WEBHOOK, settings.TWIN_NOTIFY_FORMAT
    if shape == "ntfy":
        parts = urlsplit(url)
        base, _slash, topic = parts.path.rstrip("/").rpartition("/")
        # the server's root, keeping a query such as ?auth=... (ntfy's access token in the address)
        url = urlunsplit((parts.scheme, parts.netloc, base + "/", parts.query, ""))
        document = ntfy_document(content, topic)
    elif shape == "slack":
        document = slack_document(content)
    else:
        document = json_document(content)
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    stamp = int(time.time())  # of this attempt: a retry is signed afresh
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": "Twinsite",
               "webhook-id": content["id"], "webhook-timestamp": str(stamp),
               "webhook-signature": standard_signature(content["id"], stamp, body),
               "Idempotency-Key": content["id"], "X-Twinsite-Signature": signature(body),
               "X-Twinsite-Event": "test" if content["kind"] == "test" else "contact_requests"}
    return url, body, headers


def webhook_post(content: dict) -> int:
    """POST the notice within ``DEADLINE`` seconds in all; the receiver's status code when it is
    a 2xx, else ``ReceiverRefused`` (or the timeout or connection error)."""
    url, body, headers = webhook_request(content)

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as client:
            return await asyncio.wait_for(client.post(url, content=body, headers=headers), DEADLINE)

    try:
        # async_to_sync, not asyncio.run: it works from a thread that already runs an event loop
        response = async_to_sync(post)()
    except TimeoutError:
        raise TimeoutError(f"no answer within {DEADLINE:.0f} s") from None
    if not 200 <= response.status_code < 300:
        raise ReceiverRefused(f"HTTP {response.status_code}: {' '.join(response.text.split())[:300]}")
    return response.status_code

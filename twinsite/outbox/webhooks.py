"""How the outbox POSTs to the owner's webhook (``TWIN_NOTIFY_WEBHOOK``): signed as Standard
Webhooks (https://www.standardwebhooks.com/) signs, within one deadline, and anything but a 2xx
answer a failure that the sender settles and retries. What is posted (a notice's shape) is the
sender's business: ``twinsite.outbox.channels``.

The signature: ``webhook-id`` (the row's id, the same on every attempt), ``webhook-timestamp``
(Unix seconds of this attempt) and ``webhook-signature: v1,<base64>``, the HMAC-SHA256 of
``<id>.<timestamp>.<raw body>`` keyed by ``TWIN_NOTIFY_WEBHOOK_SECRET`` (``whsec_`` and the key in
base64, as the spec's libraries take it; a secret without the prefix is the key as it is). A
receiver that rejects timestamps more than five minutes off cannot be sent a captured POST again
(docs/NOTIFICATIONS.md). ``Idempotency-Key`` repeats the id, and ``X-Twinsite-Signature:
sha256=<hex>`` (the body's HMAC alone, keyed by the secret's text: replayable) is kept for
receivers written before.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time
from urllib.parse import urlsplit

import httpx
from asgiref.sync import async_to_sync
from django.conf import settings

TIMEOUT = httpx.Timeout(10.0, connect=5.0)  # per step: connecting, sending, each read
DEADLINE = 15.0  # seconds for the whole POST: a receiver that trickles its answer is cut off too


class ReceiverRefused(Exception):
    """The receiver answered, but not with a 2xx."""


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


def signed_headers(message_id: str, body: bytes) -> dict[str, str]:
    """The headers that sign ``body`` and name it, for this attempt: a retry is signed afresh."""
    stamp = int(time.time())
    return {"webhook-id": message_id, "webhook-timestamp": str(stamp),
            "webhook-signature": standard_signature(message_id, stamp, body),
            "Idempotency-Key": message_id, "X-Twinsite-Signature": signature(body)}


def webhook_host() -> str:
    return urlsplit(settings.TWIN_NOTIFY_WEBHOOK).hostname or "?"


def describe_error(exc: Exception) -> str:
    """The error as the admin shows it, with the webhook's address (a secret, for Slack) cut to its host."""
    text = f"{type(exc).__name__}: {exc}"
    if settings.TWIN_NOTIFY_WEBHOOK:
        text = text.replace(settings.TWIN_NOTIFY_WEBHOOK, f"<{webhook_host()}>")
    return text


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST within ``DEADLINE`` seconds in all; the receiver's status code when it is a 2xx, else
    ``ReceiverRefused`` (or the timeout or connection error)."""

    async def send() -> httpx.Response:
        async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as client:
            return await asyncio.wait_for(client.post(url, content=body, headers=headers), DEADLINE)

    try:
        # async_to_sync, not asyncio.run: it works from a thread that already runs an event loop
        response = async_to_sync(send)()
    except TimeoutError:
        raise TimeoutError(f"no answer within {DEADLINE:.0f} s") from None
    if not 200 <= response.status_code < 300:
        raise ReceiverRefused(f"HTTP {response.status_code}: {' '.join(response.text.split())[:300]}")
    return response.status_code

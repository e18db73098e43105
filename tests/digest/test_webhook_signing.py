"""The owner's webhook is signed as Standard Webhooks sign (issue 57): ``webhook-id``,
``webhook-timestamp`` and ``webhook-signature`` over ``id.timestamp.body``. The receiver that
docs/NOTIFICATIONS.md shows is run here, as written there, against real POSTs on loopback: it
takes them, and refuses them altered or more than five minutes old (a replay)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from tests.fakes.receiver import Receiver
from twinsite.outbox import channels, webhooks

DOC = Path(__file__).resolve().parents[2] / "docs" / "NOTIFICATIONS.md"
SECRET = "whsec_" + base64.b64encode(b"a key of thirty-two bytes, made.").decode()

# The spec's own example (its reference libraries test with it)
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID, SPEC_STAMP, SPEC_BODY = "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def documented_receiver():
    """The ```python block after ``<!-- receiver -->`` in docs/NOTIFICATIONS.md, executed."""
    text = DOC.read_text(encoding="utf-8")
    code = re.search(r"<!-- receiver -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert code, "docs/NOTIFICATIONS.md lost its receiver"
    namespace: dict = {}
    exec(compile(code[1], str(DOC), "exec"), namespace)  # noqa: S102 (our own documentation)
    return namespace["is_from_my_twin"]


@pytest.fixture
def receiver(settings):
    server = Receiver().start()
    settings.TWIN_NOTIFY_WEBHOOK = server.url + "/hooks/twin"
    settings.TWIN_NOTIFY_WEBHOOK_SECRET = SECRET
    settings.TWIN_NOTIFY_FORMAT = "json"
    settings.TWIN_NOTIFY_EMAIL = False
    yield server
    server.stop()


def test_the_signature_is_the_specs():
    assert webhooks.standard_signature(SPEC_ID, SPEC_STAMP, SPEC_BODY, SPEC_SECRET) == SPEC_SIGNATURE
    verify = documented_receiver()
    headers = {"webhook-id": SPEC_ID, "webhook-timestamp": str(SPEC_STAMP), "webhook-signature": SPEC_SIGNATURE}
    assert verify(SPEC_BODY, headers, SPEC_SECRET, now=SPEC_STAMP + 10)


@pytest.mark.django_db
def test_the_documented_receiver_takes_a_real_post_and_refuses_a_replay_or_a_change(receiver):
    verify = documented_receiver()
    before = int(time.time())
    call_command("notify_owner", "--test")
    [post] = receiver.requests
    headers, body = post.headers, post.body
    stamp = int(headers["webhook-timestamp"])
    assert before <= stamp <= int(time.time())
    assert headers["webhook-id"] == headers["idempotency-key"] and headers["webhook-signature"].startswith("v1,")

    assert verify(body, headers, SECRET)
    assert verify(body, headers, SECRET, now=stamp + 299) and verify(body, headers, SECRET, now=stamp - 299)
    assert not verify(body, headers, SECRET, now=stamp + 301)  # the same POST sent again six minutes on
    assert not verify(body, headers, SECRET, now=stamp - 301)  # a clock, or a stamp, from the future
    assert not verify(body.replace(b'"test"', b'"tset"'), headers, SECRET)
    assert not verify(body, {**headers, "webhook-timestamp": str(stamp + 1)}, SECRET)  # re-stamped
    assert not verify(body, {**headers, "webhook-id": "another"}, SECRET)
    assert not verify(body, headers, "whsec_" + base64.b64encode(b"another key of thirty-two bytes.").decode())
    assert not verify(body, {k: v for k, v in headers.items() if k != "webhook-signature"}, SECRET)


@pytest.mark.django_db
def test_a_retry_keeps_its_id_and_a_secret_from_before_still_signs_both_headers(receiver, settings):
    """A secret without ``whsec_`` (from before) is its text as the key, for both signatures."""
    plain = "a-plain-secret-from-before-0123"
    settings.TWIN_NOTIFY_WEBHOOK_SECRET = plain
    receiver.statuses = [500]
    content = {"id": "b1c6e4c2-0000-4000-8000-000000000001", "kind": "test", "requests": [], "more": 0,
               "created_at": timezone.now(), "owner": "O", "admin_url": "https://twin.example/admin/"}
    with pytest.raises(webhooks.ReceiverRefused):
        channels.webhook_post(content)
    channels.webhook_post(content)
    verify = documented_receiver()
    for post in receiver.requests:
        assert post.headers["webhook-id"] == content["id"] and verify(post.body, post.headers, plain)
        legacy = "sha256=" + hmac.new(plain.encode(), post.body, hashlib.sha256).hexdigest()
        assert post.headers["x-twinsite-signature"] == legacy
    assert not verify(post.body, post.headers, SECRET)

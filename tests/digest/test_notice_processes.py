"""The owner's notices across real processes: a contact request asked through ``manage.py ask``
reaches a webhook on loopback through ``manage.py notify_owner``, once; and a sender killed while
the receiver holds its POST repeats it once, with the same Idempotency-Key, and no more."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection

from approvals.models import PendingApproval
from digest.links import link_check
from digest.models import NoticeDelivery, OwnerNotice
from tests.fakes.receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
SECRET = "another-test-secret-0123456789"


def process_env(receiver: Receiver, tmp_path: Path) -> dict:
    sd = connection.settings_dict
    return dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
                f"{sd['NAME']}", TWIN_PROVIDER="offline", DJANGO_SETTINGS_MODULE="twinsite.settings",
                EMAIL_BACKEND="file", EMAIL_FILE_PATH=str(tmp_path / "mail"), TWIN_NOTIFY_EMAIL="0",
                TWIN_NOTIFY_WEBHOOK=receiver.url + "/twin", TWIN_NOTIFY_WEBHOOK_SECRET=SECRET,
                TWIN_NOTIFY_FORMAT="json", TWIN_NOTIFY_QUIET="off")


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def valid_signature(received) -> bool:
    expected = "sha256=" + hmac.new(SECRET.encode(), received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(received.headers["x-twinsite-signature"], expected)


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


def test_a_request_asked_through_ask_reaches_the_webhook_once(kb, receiver, tmp_path):
    env = process_env(receiver, tmp_path)
    asked = manage(env, "ask", "Can I send her a message? I'm Tom Visser, tom.visser@example.com. I'd like to "
                               "discuss a data platform project.")
    assert asked.returncode == 0, asked.stderr
    assert "[approval_pending]" in asked.stdout
    approval = PendingApproval.objects.get()
    assert receiver.requests == []  # the visitor's turn sends nothing

    told = manage(env, "notify_owner")
    assert told.returncode == 0, told.stderr
    assert "sent: notice" in told.stdout and f"(#{approval.pk})" in told.stdout
    [post] = receiver.requests
    assert valid_signature(post)
    [item] = json.loads(post.body)["requests"]
    assert (item["id"], item["visitor_email"]) == (approval.pk, "tom.visser@example.com")
    assert "Tom" in item["visitor_name"]

    again = manage(env, "notify_owner")
    assert again.returncode == 0, again.stderr
    assert "Nothing to send" in again.stdout and len(receiver.requests) == 1


def test_a_sender_killed_mid_send_repeats_the_notice_once_with_the_same_id(kb, tmp_path):
    from tests.digest.seed import request

    receiver = Receiver(hang_first=True).start()
    try:
        env = process_env(receiver, tmp_path)
        tom = request()
        sender = subprocess.Popen([sys.executable, "manage.py", "notify_owner"], cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert receiver.arrived.wait(120), "the notice never reached the receiver"
        finally:
            sender.send_signal(signal.SIGKILL)  # after the receiver has it, before the sender records it
            sender.wait(timeout=30)
        receiver.release()
        [notice] = OwnerNotice.objects.all()
        delivery = NoticeDelivery.objects.get()
        assert (delivery.status, delivery.attempts) == ("pending", 0)  # the kill rolled the attempt back

        resent = manage(env, "notify_owner")
        assert resent.returncode == 0, resent.stderr
        first, second = receiver.requests
        assert first.headers["idempotency-key"] == second.headers["idempotency-key"] == str(notice.pk)
        assert valid_signature(first) and valid_signature(second)
        # the same notice: the links of the one that got through (before the kill) work too
        [killed_item], [item] = json.loads(first.body)["requests"], json.loads(second.body)["requests"]
        assert {k: v for k, v in killed_item.items() if not k.endswith("_url")} == \
            {k: v for k, v in item.items() if not k.endswith("_url")}
        link = link_check(urlsplit(killed_item["approve_url"]).path.rstrip("/").rsplit("/", 1)[-1])
        assert (link.approval_id, link.decision) == (tom.pk, "approve")

        assert "Nothing to send" in manage(env, "notify_owner").stdout
        assert len(receiver.requests) == 2
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("sent", 1)
    finally:
        receiver.stop()

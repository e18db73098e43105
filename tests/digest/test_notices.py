"""Telling the owner at once (twinsite.outbox.notices): a waiting request becomes one signed notice, later
ones are bundled, quiet hours hold them, a failing receiver is retried until it takes it once,
and two workers send one notice. The receiver is a real HTTP server on loopback."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from django.views.debug import get_default_exception_reporter_filter

from approvals.models import PendingApproval
from chat.turns.decisions import approval_decide
from digest.links import link_check
from digest.models import DigestLink, NoticeDelivery, OwnerNotice
from tests.concurrently import at_once
from tests.digest.seed import request
from tests.fakes.receiver import Receiver
from twinsite.outbox import webhooks
from twinsite.outbox.notices import notices_purge, notices_run, quiet_until

SECRET = "a-test-secret-of-32-characters!!"


@pytest.fixture
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def webhook(settings, receiver):
    settings.TWIN_NOTIFY_WEBHOOK = receiver.url + "/hooks/twin"
    settings.TWIN_NOTIFY_WEBHOOK_SECRET = SECRET
    settings.TWIN_NOTIFY_FORMAT = "json"
    settings.TWIN_NOTIFY_EVERY = 600
    settings.TWIN_NOTIFY_QUIET = None
    settings.TWIN_SITE_URL = "https://twin.example"
    return receiver


def signed(received) -> bool:
    expected = "sha256=" + hmac.new(SECRET.encode(), received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(received.headers["x-twinsite-signature"], expected)


def token(url: str) -> str:
    return urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]


def local(hour: int, minute: int = 0, days: int = 0) -> dt.datetime:
    day = timezone.localdate() + dt.timedelta(days=days)
    return timezone.make_aware(dt.datetime.combine(day, dt.time(hour, minute)))


@pytest.mark.django_db
def test_a_request_becomes_one_signed_notice_by_webhook_and_email(webhook):
    tom = request()
    report = notices_run()
    assert report.created is not None and [o for _, o in report.sent] == ["sent", "sent"]

    [post] = webhook.requests
    assert post.path == "/hooks/twin" and signed(post)
    assert post.headers["idempotency-key"] == str(report.created.pk)
    assert post.headers["content-type"].startswith("application/json")
    document = json.loads(post.body)
    assert document["type"] == "contact_requests" and document["id"] == str(report.created.pk)
    [item] = document["requests"]
    assert (item["id"], item["visitor_name"], item["visitor_email"]) == (tom.pk, "Tom", "tom@example.com")
    assert item["message"] == "I'd like to talk about a data platform project."
    assert item["admin_url"] == f"https://twin.example/admin/approvals/pendingapproval/{tom.pk}/change/"
    # the one-click links are the digest's: signed, for this request, each deciding one way
    approve, reject = link_check(token(item["approve_url"])), link_check(token(item["reject_url"]))
    assert (approve.approval_id, approve.decision, reject.decision) == (tom.pk, "approve", "reject")

    [email] = mail.outbox
    assert email.to == ["owner@localhost"] and email.subject == "Tom asks to reach you through your digital twin"
    assert "tom@example.com" in email.body and "data platform project" in email.body
    # the same link rows as the webhook's, each address freshly signed
    mailed = re.search(r"Approve: (\S+)", email.body)[1]
    assert link_check(token(mailed)).pk == approve.pk
    [(html, mimetype)] = email.alternatives
    assert mimetype == "text/html" and "Approve</a>" in html and "&lt;tom@example.com&gt;" in html
    assert email.extra_headers["Message-ID"] == f"<notice-{report.created.pk}@twinsite>"

    # told once: the next runs send nothing
    assert not notices_run().did_anything and not notices_run().did_anything
    assert len(webhook.requests) == 1 and len(mail.outbox) == 1


@pytest.mark.django_db
def test_requests_within_the_window_are_bundled_into_the_next_notice(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    start = timezone.now()
    first = request()
    assert notices_run(start).created is not None
    second, third = request(name="Anna", email="anna@example.com"), request(name="Bob", email="bob@example.com")

    held = notices_run(start + dt.timedelta(minutes=2))
    assert held.created is None and held.held_until == start + dt.timedelta(minutes=10)
    assert len(webhook.requests) == 1

    bundled = notices_run(start + dt.timedelta(minutes=10))
    assert bundled.created is not None and len(webhook.requests) == 2
    names = [r["visitor_name"] for r in json.loads(webhook.requests[1].body)["requests"]]
    assert names == ["Anna", "Bob"]
    assert OwnerNotice.objects.count() == 2
    assert {i.approval_id for i in bundled.created.items.all()} == {second.pk, third.pk}
    assert first.pk not in {i.approval_id for i in bundled.created.items.all()}


@pytest.mark.django_db
def test_quiet_hours_hold_notices_until_they_end(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    settings.TWIN_NOTIFY_QUIET = ((22, 0), (7, 0))
    assert quiet_until(local(23, 30)) == local(7, 0, days=1)
    assert quiet_until(local(6, 59)) == local(7, 0)
    assert quiet_until(local(7, 0)) is None and quiet_until(local(21, 59)) is None
    request()
    request(name="Anna", email="anna@example.com")
    night = notices_run(local(23, 30))
    assert night.quiet_until == local(7, 0, days=1) and not night.did_anything
    assert webhook.requests == [] and not OwnerNotice.objects.exists()

    morning = notices_run(local(7, 0, days=1))
    assert morning.created is not None
    [post] = webhook.requests
    assert [r["visitor_name"] for r in json.loads(post.body)["requests"]] == ["Tom", "Anna"]

    settings.TWIN_NOTIFY_QUIET = ((12, 0), (13, 30))  # a window within one day
    assert quiet_until(local(12, 45)) == local(13, 30) and quiet_until(local(13, 30)) is None


@pytest.mark.django_db
def test_a_receiver_that_fails_then_recovers_gets_the_notice_once(webhook, settings, admin_client):
    settings.TWIN_NOTIFY_EMAIL = False
    webhook.statuses = [500]
    tom = request()
    now = timezone.now()
    report = notices_run(now)
    assert [o for _, o in report.sent] == ["failed"]
    delivery = NoticeDelivery.objects.get()
    assert delivery.status == "failed" and delivery.attempts == 1 and delivery.next_attempt_at > now
    assert delivery.last_error.startswith("ReceiverRefused: HTTP 500: receiver is down")

    # the admin shows the failure, its error and, on the request, how the owner was (not) told
    page = admin_client.get("/admin/digest/noticedelivery/?status__exact=failed").content.decode()
    assert "HTTP 500: receiver is down" in page
    told = admin_client.get(f"/admin/approvals/pendingapproval/{tom.pk}/change/").content.decode()
    assert "webhook: failed x1 (ReceiverRefused: HTTP 500" in told
    index = admin_client.get("/admin/").content.decode()
    assert "1 notice to you could not be sent (retried)" in index

    assert not notices_run(now).did_anything  # its back-off has not passed
    assert [o for _, o in notices_run(delivery.next_attempt_at).sent] == ["sent"]
    assert [r.headers["idempotency-key"] for r in webhook.requests] == [str(delivery.notice_id)] * 2
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 2, "")
    assert not notices_run(delivery.next_attempt_at or timezone.now()).did_anything
    assert len(webhook.requests) == 2
    assert "could not be sent" not in admin_client.get("/admin/").content.decode()
    listing = admin_client.get("/admin/approvals/pendingapproval/").content.decode()
    assert f"webhook: {timezone.localtime(delivery.sent_at):%d %b %H:%M}" in listing


@pytest.mark.django_db(transaction=True)
def test_two_workers_send_one_notice(webhook):
    request()
    errors = []

    def worker() -> None:
        try:
            notices_run()
        except Exception as exc:  # a thread's exception would pass unseen
            errors.append(exc)

    at_once(worker, worker)
    assert errors == []
    assert OwnerNotice.objects.count() == 1
    assert len(webhook.requests) == 1 and len(mail.outbox) == 1
    assert set(NoticeDelivery.objects.values_list("status", flat=True)) == {"sent"}


@pytest.mark.django_db
def test_a_request_decided_before_its_notice_goes_is_not_announced(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    webhook.statuses = [503]
    tom = request()
    now = timezone.now()
    notices_run(now)  # the receiver is down: retried later
    approval_decide(approval_id=tom.pk, decision="approve", actor="mira")
    report = notices_run(now + dt.timedelta(hours=1))
    assert [o for _, o in report.sent] == ["dropped"] and len(webhook.requests) == 1
    assert PendingApproval.objects.get(pk=tom.pk).status == "approved"


@pytest.mark.django_db
def test_ntfy_and_slack_shapes(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    settings.TWIN_NOTIFY_FORMAT = "ntfy"
    settings.TWIN_NOTIFY_WEBHOOK = webhook.url + "/ntfy/twin-mira-7f3a"
    request(name="Tom", message="Hello <!channel> see <https://evil.example|your bank>")
    notices_run()
    [post] = webhook.requests
    document = json.loads(post.body)
    # ntfy's JSON publishing: posted to the server's root (here under /ntfy/), the topic inside
    assert post.path == "/ntfy/" and document["topic"] == "twin-mira-7f3a" and signed(post)
    assert document["title"] == "Tom asks to reach you through your digital twin"
    assert [a["label"] for a in document["actions"]] == ["Approve", "Reject", "Open the admin"]
    assert all(a["action"] == "view" and a["url"].startswith("https://twin.example/") for a in document["actions"])
    assert "Tom <tom@example.com>: Hello" in document["message"]
    assert link_check(token(document["actions"][0]["url"])).decision == "approve"

    settings.TWIN_NOTIFY_FORMAT = "slack"
    settings.TWIN_NOTIFY_WEBHOOK = webhook.url + "/services/T000/B000/XXXX"
    request(name="Anna <!here>", email="anna@example.com", message="Line one\nLine two <!channel>")
    notices_run(timezone.now() + dt.timedelta(minutes=11))
    post = webhook.requests[1]
    document = json.loads(post.body)
    assert post.path == "/services/T000/B000/XXXX" and signed(post)
    assert document["text"] == "Anna &lt;!here&gt; asks to reach you through your digital twin"
    section = document["blocks"][1]["text"]["text"]
    # a visitor's control sequences stay text: no @channel, no disguised link
    assert "<!" not in section
    assert section == "*Anna &lt;!here&gt;* (anna@example.com)\n> Line one\n> Line two &lt;!channel&gt;"
    buttons = document["blocks"][2]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["Approve", "Reject", "Edit first, in the admin"]
    assert buttons[0]["style"] == "primary" and link_check(token(buttons[1]["url"])).decision == "reject"
    assert document["blocks"][1]["text"]["verbatim"] is True  # a plain "@channel" stays text too

    # a message that grows when escaped still fits Slack's 3,000 characters a section
    request(name="Bob", email="bob@example.com", message="&" * 1500 + "\n" + "<" * 1500)
    notices_run(timezone.now() + dt.timedelta(minutes=22))
    section = json.loads(webhook.requests[2].body)["blocks"][1]["text"]["text"]
    assert 2800 < len(section) <= 3000 and section.startswith("*Bob* (bob@example.com)\n> &amp;&amp;")

    settings.TWIN_NOTIFY_FORMAT = "ntfy"  # an access token in the topic's address is kept
    settings.TWIN_NOTIFY_WEBHOOK = webhook.url + "/twin-mira?auth=tk_abc"
    request(name="Eve", email="eve@example.com", message="x" * 5000)
    notices_run(timezone.now() + dt.timedelta(minutes=33))
    assert webhook.requests[3].path == "/?auth=tk_abc"
    assert len(json.loads(webhook.requests[3].body)["message"].encode()) <= 3800


@pytest.mark.django_db
def test_the_notice_is_in_the_owners_language(webhook, settings):
    settings.TWIN_OWNER_LANGUAGE = "nl"
    request()
    request(name="Anna", email="anna@example.com")
    notices_run()
    [email] = mail.outbox
    assert email.subject == "2 contactverzoeken wachten op je"
    assert "2 bezoekers vroegen je digitale tweeling een bericht door te geven" in email.body
    assert "Goedkeuren" in email.alternatives[0][0]
    assert json.loads(webhook.requests[0].body)["title"] == "2 contactverzoeken wachten op je"


@pytest.mark.django_db
def test_notify_owner_test_goes_through_every_channel(webhook, capsys, admin_client):
    call_command("notify_owner", "--test")
    out = capsys.readouterr().out
    assert "sent: notice" in out and "by e-mail to owner@localhost" in out and "by webhook to 127.0.0.1 (json)" in out
    [post] = webhook.requests
    assert json.loads(post.body)["type"] == "test" and post.headers["x-twinsite-event"] == "test" and signed(post)
    assert mail.outbox[0].subject == "Test notice from your digital twin"

    webhook.statuses = [500]
    with pytest.raises(CommandError, match="did not get through"):
        call_command("notify_owner", "--test")
    assert "failed: notice" in capsys.readouterr().out
    # a test notice is tried once: the worker does not retry it, and the index does not warn of it
    assert not notices_run(timezone.now() + dt.timedelta(days=1)).did_anything
    assert DigestLink.objects.count() == 0
    assert NoticeDelivery.objects.get(status="failed").next_attempt_at is None
    assert "could not be sent" not in admin_client.get("/admin/").content.decode()


@pytest.mark.django_db
def test_notify_owner_prints_what_it_sent_and_what_waits(webhook, settings, capsys):
    settings.TWIN_NOTIFY_EMAIL = False
    call_command("notify_owner")
    assert "Nothing to send" in capsys.readouterr().out
    tom = request()
    call_command("notify_owner")
    assert "sent: notice" in (out := capsys.readouterr().out) and f"(#{tom.pk})" in out
    request(name="Anna", email="anna@example.com")
    call_command("notify_owner")
    assert "wait for the next notice at" in capsys.readouterr().out
    settings.TWIN_NOTIFY_WEBHOOK = ""
    with pytest.raises(CommandError, match="no channel is configured"):
        call_command("notify_owner")


@pytest.mark.django_db
def test_a_large_bundle_lists_ten_and_counts_the_rest_each_listed_one_with_working_links(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    webhook.statuses = [500]
    waiting = [request(name=f"Visitor {n}", email=f"v{n}@example.com") for n in range(12)]
    now = timezone.now()
    notices_run(now)  # refused: sent again later, when two of the first ten were decided
    for approval in waiting[:2]:
        approval_decide(approval_id=approval.pk, decision="reject", actor="mira", reason="spam")
    notices_run(now + dt.timedelta(hours=1))
    document = json.loads(webhook.requests[-1].body)
    assert [r["id"] for r in document["requests"]] == [a.pk for a in waiting[2:12]] and document["more"] == 0
    assert link_check(token(document["requests"][-1]["approve_url"])).approval_id == waiting[11].pk
    first = json.loads(webhook.requests[0].body)
    assert len(first["requests"]) == 10 and first["more"] == 2


@pytest.mark.django_db
def test_notices_that_did_not_get_through_go_as_one_when_the_receiver_is_back(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    webhook.statuses = [500, 500, 500]
    start = timezone.now()
    request()
    notices_run(start)  # refused
    request(name="Anna", email="anna@example.com")
    notices_run(start + dt.timedelta(minutes=10))  # a second notice, refused too, the first is not tried alone
    assert OwnerNotice.objects.count() == 2 and len(webhook.requests) == 2
    request(name="Bob", email="bob@example.com")
    notices_run(start + dt.timedelta(minutes=20))  # a third notice, refused
    webhook.statuses = []
    report = notices_run(start + dt.timedelta(hours=2))  # back: one POST carries the three requests
    assert [o for _, o in report.sent] == ["sent"] and len(webhook.requests) == 4
    document = json.loads(webhook.requests[-1].body)
    assert [r["visitor_name"] for r in document["requests"]] == ["Tom", "Anna", "Bob"]
    newest = OwnerNotice.objects.order_by("-created_at").first()
    assert document["id"] == str(newest.pk)
    statuses = dict(NoticeDelivery.objects.values_list("notice__created_at", "status"))
    assert sorted(statuses.values()) == ["merged", "merged", "sent"]
    assert not notices_run(start + dt.timedelta(days=1)).did_anything
    # each request's links work, though they came with another notice than their own
    for item in document["requests"]:
        assert link_check(token(item["reject_url"])).approval_id == item["id"]


@pytest.mark.django_db
def test_a_receiver_that_holds_the_answer_is_cut_off_and_the_address_stays_secret(settings, monkeypatch):
    server = Receiver(hang_first=True).start()
    try:
        settings.TWIN_NOTIFY_EMAIL = False
        settings.TWIN_NOTIFY_WEBHOOK = server.url + "/services/T0/B0/secret-part"
        settings.TWIN_NOTIFY_WEBHOOK_SECRET = SECRET
        monkeypatch.setattr(webhooks, "DEADLINE", 1.0)
        request()
        [(delivery, outcome)] = notices_run().sent
        assert outcome == "failed" and delivery.last_error == "TimeoutError: no answer within 1 s"
    finally:
        server.stop()
    # an error that names the address names only its host; error pages hide the setting
    assert webhooks.describe_error(OSError(f"cannot reach {settings.TWIN_NOTIFY_WEBHOOK}")) == \
        "OSError: cannot reach <127.0.0.1>"
    safe = get_default_exception_reporter_filter().get_safe_settings()
    assert "secret-part" not in str(safe["TWIN_NOTIFY_WEBHOOK"])


@pytest.mark.django_db
def test_old_notices_go_with_their_requests(webhook, settings):
    settings.TWIN_NOTIFY_EMAIL = False
    settings.TWIN_CONVERSATION_RETENTION_DAYS = 30
    tom, anna = request(), request(name="Anna", email="anna@example.com")
    notices_run()
    call_command("notify_owner", "--test")
    later = timezone.now() + dt.timedelta(days=31)
    assert notices_purge(later) == 1  # the test notice; the other still names two requests
    tom.conversation.delete()  # the retention purge takes a conversation with its request
    assert notices_purge(later) == 0  # it still names Anna's
    anna.conversation.delete()
    assert notices_purge(timezone.now()) == 0  # too young
    assert notices_purge(later) == 1 and not OwnerNotice.objects.exists()
    assert not NoticeDelivery.objects.exists()

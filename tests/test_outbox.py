"""The one outbox (twinsite.outbox): no network call is made inside a transaction or under a row
lock; a live sender's lease keeps a second one out, a dead sender's lease does not; what goes to
the owner is in the owner's language."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from django.db import connection, connections
from django.utils import timezone

from approvals.delivery import contact_email
from approvals.models import ContactMessage
from digest.models import NoticeDelivery
from tests.digest.seed import request
from tests.fakes.receiver import Receiver
from twinsite import outbox
from twinsite.outbox.notices import delivery_send, notice_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def slow_receiver(settings):
    server = Receiver(hang_first=True).start()
    settings.TWIN_NOTIFY_WEBHOOK = server.url + "/hooks/twin"
    settings.TWIN_NOTIFY_WEBHOOK_SECRET = "a-secret-for-the-outbox-tests-000"
    settings.TWIN_NOTIFY_FORMAT = "json"
    settings.TWIN_NOTIFY_QUIET = None
    settings.TWIN_NOTIFY_EMAIL = False
    yield server
    server.stop()


def _sender_state(pid: int) -> tuple[str, list[tuple[str, str]]]:
    """The sender backend's state, and the locks it holds beyond its own virtual transaction id."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", [pid])
        [state] = cursor.fetchone()
        cursor.execute("SELECT locktype, mode FROM pg_locks WHERE pid = %s AND locktype <> 'virtualxid'", [pid])
        return state, cursor.fetchall()


def test_no_transaction_and_no_row_lock_is_held_while_the_receiver_holds_the_post(slow_receiver):
    request()
    notice = notice_create()
    delivery = notice.deliveries.get()
    outcomes: list[str] = []

    def send() -> None:
        try:
            outcomes.append(delivery_send(delivery.pk))
        finally:
            connections.close_all()

    sender = threading.Thread(target=send)
    sender.start()
    try:
        assert slow_receiver.arrived.wait(30), "the notice never reached the receiver"
        held = NoticeDelivery.objects.get(pk=delivery.pk)
        pid = int(held.lease_holder.partition(":")[0])
        state, locks = _sender_state(pid)
        assert state == "idle", state  # not "idle in transaction": the POST runs outside any transaction
        assert locks == []  # no row, tuple or table lock while the receiver has it
        # a second sender meanwhile finds it leased by a live sender
        assert delivery_send(delivery.pk) == "busy"
    finally:
        slow_receiver.release()
        sender.join(30)
    assert outcomes == ["sent"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.lease_holder, delivery.leased_until) == ("sent", 1, "", None)
    assert len(slow_receiver.requests) == 1


def test_a_lease_whose_sender_is_gone_is_taken_over_at_once(slow_receiver):
    slow_receiver.release()
    request()
    delivery = notice_create().deliveries.get()
    # a sender that died mid-send: its lease runs for minutes yet, but its backend no longer exists
    NoticeDelivery.objects.filter(pk=delivery.pk).update(
        leased_until=timezone.now() + dt.timedelta(minutes=4), lease_holder="2147483000:0")
    assert delivery_send(delivery.pk) == "sent"
    # a lease held by a live backend (this test's own connection) keeps every other sender out
    row = ContactMessage(approval=request(), idempotency_key="outbox-test", body="hello")
    row.save()
    ContactMessage.objects.filter(pk=row.pk).update(leased_until=timezone.now() + dt.timedelta(minutes=4),
                                                    lease_holder=outbox.holder())
    assert outbox.claim(ContactMessage.objects, row.pk, check=outbox.unsent) == (None, "busy")


def test_the_visitors_message_reaches_the_owner_in_the_owners_language(settings):
    approval = request(name="Anouk", email="anouk@example.com", message="Graag een kennismaking.")
    message = ContactMessage.objects.create(approval=approval, idempotency_key="lang-test", visitor_name="Anouk",
                                            visitor_email="anouk@example.com", body="Graag een kennismaking.")
    settings.TWIN_OWNER_LANGUAGE = "nl"
    email = contact_email(message)
    assert email.subject == "Bericht van Anouk via je digitale tweeling"
    assert "stuurde je een bericht via je digitale tweeling" in email.body and "Naam:" in email.body
    assert email.extra_headers["Message-ID"] == "<lang-test@twinsite>"
    settings.TWIN_OWNER_LANGUAGE = "en"
    assert contact_email(message).subject == "Message from Anouk via your digital twin"

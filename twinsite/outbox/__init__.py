"""One outbox for everything Twinsite sends: the visitor's approved message, the owner's instant
notices and the daily digest. Each is a row of a model built on ``Outbound``; this module is the
one way such a row leaves the house.

A send has three steps, and the network call holds no transaction open and no row locked:

1. **Claim** (a short transaction): the row is locked with ``SKIP LOCKED`` (a second sender skips
   it), checked (unsent, due, not leased by a live sender) and leased: ``leased_until`` and
   ``lease_holder``, the Postgres backend (pid and start time) of this sender's connection.
   Committed at once.
2. **Send**, outside any transaction: an e-mail backend or an HTTP POST, with its own deadline.
3. **Settle** (a short transaction): sent, or failed with the error and the next attempt after
   the one back-off (``retry_at``), and the lease cleared; only while this sender still holds it.

A lease ends when its holder settles, when its time runs out, or at once when its holder's
connection is gone: a sender killed mid-send (after the receiver got it, before it settled)
leaves a lease whose backend no longer exists, so the next run repeats the send once, with the
same idempotency key (``Outbound.idempotency_key``: the Message-ID of an e-mail, the
Idempotency-Key of a POST), and receivers recognise the repeat. ``attempts`` counts settled
attempts: a killed one is not counted.

The lease's time (``LEASE``) outlasts any send's deadline, so a live but slow sender is never
overtaken; the backend check matters only when a sender died.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from django.db import connection, models, transaction
from django.utils import timezone

from twinsite.retry import retry_at

LEASE = dt.timedelta(minutes=5)  # longer than every send's deadline (notices: 15 s; SMTP: its timeout)
BACKOFF_BASE, BACKOFF_CAP = 30.0, 3600.0  # one back-off for everything sent: 1 min, 2, 4, ... 1 h
ERROR_CHARS = 2000


class Outbound(models.Model):
    """What every row of the outbox carries: its attempts, the last error, when to try again, when
    it went, and its lease while a sender has it."""

    attempts = models.PositiveSmallIntegerField(default=0, help_text="Settled attempts to send it.")
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True, editable=False)
    lease_holder = models.CharField(max_length=64, blank=True, editable=False,
                                    help_text="The Postgres backend (pid:start) of the sender holding the lease.")

    class Meta:
        abstract = True

    @property
    def idempotency_key(self) -> str:
        """The same on every attempt of this row: receivers drop a repeat by it."""
        return f"{self._meta.label_lower}-{self.pk}"


def message_id(key: str) -> str:
    """An e-mail's Message-ID from its idempotency key: every attempt of a row carries the same one,
    so a mail box recognises a repeat (the contact message, a notice, the digest)."""
    return f"<{key}@twinsite>"


def holder() -> str:
    """This connection's Postgres backend: pid and start time (a pid alone may be reused)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), extract(epoch FROM backend_start)::text FROM pg_stat_activity "
                       "WHERE pid = pg_backend_pid()")
        pid, started = cursor.fetchone()
    return f"{pid}:{started}"[:64]


def _holder_alive(lease_holder: str) -> bool:
    pid, _, started = lease_holder.partition(":")
    if not pid.isdigit():
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s AND extract(epoch FROM backend_start)::text = %s",
                       [int(pid), started])
        return cursor.fetchone() is not None


def leased(row: Outbound, now: dt.datetime) -> bool:
    """Whether another sender holds the row now (its lease running and its backend alive)."""
    return (row.leased_until is not None and row.leased_until > now and bool(row.lease_holder)
            and _holder_alive(row.lease_holder))


def claim[Row: Outbound](queryset: models.QuerySet[Row], pk: object, *,
                         check: Callable[[Row], str | None], now: dt.datetime | None = None) -> tuple[Row | None, str]:
    """Lock, check and lease one row in a short transaction: (the row, "") when this sender has it,
    else (None, why): ``busy`` when another sender has it, or what ``check`` (called under the
    lock: is it sent, is it due?) answered."""
    now = now or timezone.now()
    with transaction.atomic():
        row = queryset.select_for_update(skip_locked=True, of=("self",)).filter(pk=pk).first()
        if row is None or leased(row, now):
            return None, "busy"
        if why := check(row):
            return None, why
        row.leased_until, row.lease_holder = now + LEASE, holder()
        type(row).objects.filter(pk=row.pk).update(leased_until=row.leased_until, lease_holder=row.lease_holder)
    return row, ""


def due[Row: Outbound](queryset: models.QuerySet[Row], now: dt.datetime) -> models.QuerySet[Row]:
    """The rows whose back-off has passed, or that were never tried: the sweeps' one filter."""
    return queryset.filter(models.Q(next_attempt_at__isnull=True) | models.Q(next_attempt_at__lte=now))


def backing_off(row: Outbound, now: dt.datetime) -> bool:
    """Whether the row waits out a failure's back-off at ``now`` (``due``, for one row)."""
    return row.next_attempt_at is not None and row.next_attempt_at > now


def unsent(row: Outbound) -> str | None:
    """The plainest check: ``busy`` once the row went."""
    return "busy" if row.sent_at is not None else None


def _settle(row: Outbound, **fields) -> bool:
    """Record an attempt's end while this sender still holds the lease; False when it does not
    (its lease ran out and another sender took the row: that one records its own)."""
    fields |= {"attempts": models.F("attempts") + 1, "leased_until": None, "lease_holder": ""}
    done = type(row).objects.filter(pk=row.pk, lease_holder=row.lease_holder).update(**fields)
    row.refresh_from_db(fields=["attempts", "leased_until", "lease_holder", "sent_at", "last_error",
                                "next_attempt_at"])
    return bool(done)


def settle_sent(row: Outbound, *, now: dt.datetime | None = None, **fields) -> bool:
    return _settle(row, sent_at=now or timezone.now(), last_error="", next_attempt_at=None, **fields)


def settle_failed(row: Outbound, error: str, *, now: dt.datetime | None = None, retry: bool = True,
                  **fields) -> bool:
    """A failed attempt: the error kept (scrubbed by the caller), the next try after the back-off
    (``retry`` False: never again by itself)."""
    next_at = retry_at(row.attempts + 1, base=BACKOFF_BASE, cap=BACKOFF_CAP, now=now) if retry else None
    return _settle(row, last_error=error[:ERROR_CHARS], next_attempt_at=next_at, **fields)


def release(row: Outbound, **fields) -> None:
    """Give the lease back without an attempt (nothing was sent), recording ``fields``."""
    type(row).objects.filter(pk=row.pk, lease_holder=row.lease_holder).update(
        leased_until=None, lease_holder="", **fields)

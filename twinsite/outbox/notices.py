"""Telling the owner at once that contact requests wait: the notices, their bundling, quiet hours,
retries and the once-only send, all kept in Postgres (``OwnerNotice``, ``NoticeItem``,
``NoticeDelivery``). The worker runs ``notices_run`` every few seconds; ``manage.py
notify_owner`` runs it on demand. A visitor's turn never sends anything: it only leaves a waiting
``PendingApproval`` behind, which the next run finds.

- **Bundling.** A notice holds every waiting request nobody told the owner of yet; a request is in
  one notice at most (``NoticeItem.approval`` is unique). After a notice, the next waits
  ``TWIN_NOTIFY_EVERY``: requests that arrive meanwhile go into that one. Notices are made under a
  transaction-scoped advisory lock, so two workers make one.
- **Quiet hours.** During ``TWIN_NOTIFY_QUIET`` nothing is made or sent; the first run after
  them sends one notice with everything that waited.
- **Once per channel.** A delivery is a row of the one outbox (``twinsite.outbox``): claimed and
  leased in a short transaction (``SKIP LOCKED``), sent with no transaction open, and marked sent
  in another. A second worker skips it. A worker killed after the receiver got it but before it
  settled leaves a lease whose holder is gone, and the next run repeats it once, with the same
  ``Idempotency-Key`` (the notice's id) and the same one-click links: their nonces derive from the
  notice (``_nonce``), and their rows were committed with the notice, before any send.
- **Retries.** A failed send is recorded with its error (the admin lists it) and retried with the
  outbox's back-off; a delivery whose requests were all decided meanwhile is dropped unsent.
  Only a channel's newest unsent notice goes, carrying the older ones' requests (``merged``).
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import salted_hmac

from approvals.models import PendingApproval
from digest.links import link_address, link_create
from digest.models import NoticeDelivery, NoticeItem, OwnerNotice
from digest.selectors import approval_item
from guards.scrub import scrub_text
from twinsite import outbox
from twinsite.outbox import channels, webhooks

log = logging.getLogger(__name__)

# pg_advisory_xact_lock key of "making a notice" (any constant unique to this use)
_LOCK_KEY = 4_707_114_705
MAX_REQUESTS = 10  # listed in one notice; the rest are counted, and the admin link lists them all
DECISIONS = ("approve", "reject")
UNSENT = (NoticeDelivery.Status.PENDING, NoticeDelivery.Status.FAILED)


@dataclass
class RunReport:
    """What a run did: for the worker's log and ``notify_owner``'s output."""

    quiet_until: dt.datetime | None = None
    held_until: dt.datetime | None = None  # the next notice may go then (TWIN_NOTIFY_EVERY)
    created: OwnerNotice | None = None
    sent: list[tuple[NoticeDelivery, str]] = field(default_factory=list)

    @property
    def did_anything(self) -> bool:
        return self.created is not None or bool(self.sent)


def configured_channels() -> list[str]:
    found = [NoticeDelivery.Channel.EMAIL] if settings.TWIN_NOTIFY_EMAIL else []
    return found + ([NoticeDelivery.Channel.WEBHOOK] if settings.TWIN_NOTIFY_WEBHOOK else [])


def quiet_until(now: dt.datetime) -> dt.datetime | None:
    """When the quiet hours that hold ``now`` end (local time), or None outside them."""
    if not settings.TWIN_NOTIFY_QUIET:
        return None
    start, end = settings.TWIN_NOTIFY_QUIET
    local = timezone.localtime(now)
    clock = (local.hour, local.minute)
    inside = start <= clock < end if start < end else (clock >= start or clock < end)
    if not inside:
        return None
    day = local.date() if clock < end else local.date() + dt.timedelta(days=1)
    return timezone.make_aware(dt.datetime.combine(day, dt.time(*end)))


def held_until(now: dt.datetime) -> dt.datetime | None:
    """When the next notice may go, if the last one went less than ``TWIN_NOTIFY_EVERY`` ago."""
    last = OwnerNotice.objects.filter(kind=OwnerNotice.Kind.REQUESTS).aggregate(last=Max("created_at"))["last"]
    if last is None:
        return None
    allowed = last + dt.timedelta(seconds=settings.TWIN_NOTIFY_EVERY)
    return allowed if allowed > now else None


def untold(now: dt.datetime):
    """Waiting requests that are in no notice yet."""
    return PendingApproval.objects.filter(status=PendingApproval.Status.PENDING, expires_at__gt=now,
                                          owner_notice_item__isnull=True)


def _nonce(notice_id, approval_id: int, decision: str) -> str:
    """A link's nonce, derived again for every attempt of the notice (keyed by SECRET_KEY: nobody
    without it can derive it; the database keeps only its hash, as for every link)."""
    mac = salted_hmac("twinsite.notice.link", f"{notice_id}:{approval_id}:{decision}", algorithm="sha256")
    return base64.urlsafe_b64encode(mac.digest()[:18]).decode()


def _target(channel: str) -> str:
    if channel == NoticeDelivery.Channel.EMAIL:
        return settings.TWIN_OWNER_EMAIL[:200]
    return f"{webhooks.webhook_host()} ({settings.TWIN_NOTIFY_FORMAT})"[:200]


def _notice_create(kind: str, now: dt.datetime, approvals: list[PendingApproval], kinds: list[str]) -> OwnerNotice:
    notice = OwnerNotice.objects.create(kind=kind, created_at=now)
    NoticeItem.objects.bulk_create([NoticeItem(notice=notice, approval=a) for a in approvals])
    for approval in approvals:  # every one: a request decided meanwhile moves a later one up the list
        for decision in DECISIONS:
            link_create(approval=approval, decision=decision, now=now, nonce=_nonce(notice.pk, approval.pk, decision))
    NoticeDelivery.objects.bulk_create([NoticeDelivery(notice=notice, channel=c, target=_target(c)) for c in kinds])
    return notice


def notice_create(now: dt.datetime | None = None, report: RunReport | None = None) -> OwnerNotice | None:
    """Bundle the waiting requests nobody told the owner of into a notice, unless one went out
    less than ``TWIN_NOTIFY_EVERY`` ago (then ``report.held_until`` says when). One at a time
    across workers: the advisory lock is held until the transaction ends."""
    now = now or timezone.now()
    kinds = configured_channels()
    if not kinds:
        return None
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
        waiting = list(untold(now).order_by("created_at", "pk"))
        if not waiting:
            return None
        if (until := held_until(now)) is not None:
            if report is not None:
                report.held_until = until
            return None
        return _notice_create(OwnerNotice.Kind.REQUESTS, now, waiting, kinds)


def _links(notice_id, approval: PendingApproval, now: dt.datetime) -> tuple[str, str]:
    """The request's approve and reject links as this notice carries them, renewed to work for
    ``TWIN_DIGEST_LINK_TTL`` from now (a notice that got through late has live links); made
    again if they are gone (a changed SECRET_KEY derives other nonces)."""
    urls = []
    for decision in DECISIONS:
        nonce = _nonce(notice_id, approval.pk, decision)
        urls.append(link_address(nonce, renew=now)
                    or link_create(approval=approval, decision=decision, now=now, nonce=nonce))
    return urls[0], urls[1]


def notice_content(notice: OwnerNotice, *, also: list[OwnerNotice] = (), now: dt.datetime | None = None) -> dict:
    """What the notice says now: the requests of ``notice`` (and of the older, unsent notices in
    ``also``, which it carries) that still wait, oldest first, each with its one-click links. The
    same on every attempt but for the links' signature timestamps."""
    now = now or timezone.now()
    waiting = (PendingApproval.objects.filter(owner_notice_item__notice__in=[notice, *also],
                                              status=PendingApproval.Status.PENDING)
               .select_related("owner_notice_item").order_by("created_at", "pk"))
    requests = []
    for approval in waiting[:MAX_REQUESTS]:
        item = approval_item(approval)
        item["approve_url"], item["reject_url"] = _links(approval.owner_notice_item.notice_id, approval, now)
        requests.append(item)
    admin = reverse("admin:approvals_pendingapproval_changelist") + "?status__exact=pending"
    return {"id": str(notice.pk), "kind": notice.kind, "created_at": notice.created_at, "requests": requests,
            "more": max(waiting.count() - len(requests), 0), "owner": settings.TWIN_OWNER_NAME,
            "admin_url": settings.TWIN_SITE_URL + admin, "site_url": settings.TWIN_SITE_URL}


def _unsent(channel: str):
    return NoticeDelivery.objects.filter(channel=channel, status__in=UNSENT, notice__kind=OwnerNotice.Kind.REQUESTS)


def delivery_send(delivery_id: int, now: dt.datetime | None = None) -> str:
    """Send one delivery if nobody else is sending or has sent it, through the one outbox
    (``twinsite.outbox``: no transaction is open while the receiver is called); the outcome:
    ``sent``, ``failed`` (recorded, retried later), ``dropped`` (nothing waits any more), ``busy``
    (another worker has it, or it is done) or ``later`` (its back-off has not passed, or a newer
    notice on its channel will carry its requests).

    Only the newest unsent notice of a channel goes: it carries the requests of the older ones
    that did not get through (a receiver that was down, quiet hours), which are then marked
    ``merged``. So a receiver that comes back gets one notice, not one per ``TWIN_NOTIFY_EVERY``.
    """
    now = now or timezone.now()

    def check(delivery: NoticeDelivery) -> str | None:
        if delivery.status not in UNSENT:
            return "busy"
        if outbox.backing_off(delivery, now):
            return "later"
        if delivery.notice.kind == OwnerNotice.Kind.REQUESTS and _unsent(delivery.channel).filter(
                notice__created_at__gt=delivery.notice.created_at).exists():
            return "later"
        return None

    delivery, why = outbox.claim(NoticeDelivery.objects.select_related("notice"), delivery_id, check=check, now=now)
    if delivery is None:
        return why
    requests = delivery.notice.kind == OwnerNotice.Kind.REQUESTS
    older = list(_unsent(delivery.channel).filter(notice__created_at__lt=delivery.notice.created_at)
                 .select_related("notice")) if requests else []
    content = notice_content(delivery.notice, also=[d.notice for d in older], now=now)
    if requests and not content["requests"]:
        outbox.release(delivery, status=NoticeDelivery.Status.DROPPED, next_attempt_at=None)
        _close(older, NoticeDelivery.Status.DROPPED, "")
        return "dropped"
    try:
        channels.send(delivery.channel, content)
    except Exception as exc:  # any failure of the receiver or the mail backend: record, retry later
        error = scrub_text(webhooks.describe_error(exc))
        # a test notice is tried once
        outbox.settle_failed(delivery, error, now=now, retry=requests, status=NoticeDelivery.Status.FAILED)
        log.warning("owner notice %s by %s not sent: %s", delivery.notice_id, delivery.channel, error)
        return "failed"
    outbox.settle_sent(delivery, status=NoticeDelivery.Status.SENT)
    _close(older, NoticeDelivery.Status.MERGED, f"sent with notice {delivery.notice_id}")
    return "sent"


def _close(deliveries: list[NoticeDelivery], status: str, note: str) -> None:
    """Close older deliveries that are still unsent and that no sender holds."""
    NoticeDelivery.objects.filter(pk__in=[d.pk for d in deliveries], status__in=UNSENT, lease_holder="").update(
        status=status, last_error=note, next_attempt_at=None)


def deliveries_due(now: dt.datetime) -> list[int]:
    """Deliveries of request notices to try now (a test notice is tried once, by notify_owner)."""
    unsent = NoticeDelivery.objects.filter(status__in=UNSENT, notice__kind=OwnerNotice.Kind.REQUESTS)
    return list(outbox.due(unsent, now).order_by("notice__created_at", "pk").values_list("pk", flat=True))


def notices_run(now: dt.datetime | None = None) -> RunReport:
    """The worker's step (and ``notify_owner``'s): outside quiet hours, bundle what waits into a
    notice when one may go, then send every delivery that is due."""
    now = now or timezone.now()
    report = RunReport(quiet_until=quiet_until(now))
    if report.quiet_until is not None:
        return report
    report.created = notice_create(now, report)
    for delivery_id in deliveries_due(now):
        outcome = delivery_send(delivery_id, now)
        if outcome in ("sent", "failed", "dropped"):
            report.sent.append((NoticeDelivery.objects.select_related("notice").get(pk=delivery_id), outcome))
    return report


def notice_test(now: dt.datetime | None = None) -> list[tuple[NoticeDelivery, str]]:
    """A test notice through every configured channel, now (quiet hours and bundling aside)."""
    now = now or timezone.now()
    kinds = configured_channels()
    with transaction.atomic():
        notice = _notice_create(OwnerNotice.Kind.TEST, now, [], kinds)
    results = []
    for delivery in notice.deliveries.order_by("channel"):
        outcome = delivery_send(delivery.pk, now)
        delivery.refresh_from_db()
        results.append((delivery, outcome))
    return results


def notices_purge(now: dt.datetime | None = None) -> int:
    """Notices older than ``TWIN_CONVERSATION_RETENTION_DAYS`` that tell of no request any more
    (their requests went with their conversations) and old test notices; returns how many."""
    now = now or timezone.now()
    before = now - dt.timedelta(days=settings.TWIN_CONVERSATION_RETENTION_DAYS)
    _, per_model = (OwnerNotice.objects.filter(created_at__lt=before)
                    .filter(Q(kind=OwnerNotice.Kind.TEST) | Q(items__isnull=True)).delete())
    return per_model.get(OwnerNotice._meta.label, 0)

"""The daily dollar budget: reserve before each model call, settle after it.

``budget_reserve`` locks the day's meter row, checks the ceiling, the conversation's share and
the client address's share, and records the call's worst-case cost in one transaction: of
concurrent turns, only as many pass as the ceiling admits, across processes. ``budget_settle``
replaces the reservation by the real cost from the provider's usage. A reservation whose turn
died expires after ``TWIN_BUDGET_RESERVATION_TTL`` and is charged at its reserved amount (the
provider may have billed it). Any error on this path refuses: fail closed.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Collection, Sequence
from decimal import Decimal

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Case, F, Sum, When
from django.utils import timezone

from budget.models import BudgetDay, LedgerEntry
from budget.selectors import budget_day, early_exhausted

log = logging.getLogger(__name__)


class BudgetRefused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # daily_limit | reserve | conversation_share | ip_share | unavailable


def _meter(day: dt.date) -> BudgetDay:
    """The day's meter, made if it is missing, locked until the transaction ends: one statement.
    The upsert's update changes nothing but locks the row as ``SELECT … FOR UPDATE`` would (it
    waits for, and then returns, the latest committed meter)."""
    table = connection.ops.quote_name(BudgetDay._meta.db_table)
    return next(iter(BudgetDay.objects.raw(
        f"INSERT INTO {table} (day, spent_usd, reserved_usd, updated_at) VALUES (%s, 0, 0, %s) "
        f"ON CONFLICT (day) DO UPDATE SET spent_usd = {table}.spent_usd RETURNING *", [day, timezone.now()])))


def _expire(meter: BudgetDay, now: dt.datetime, entry_ids: Collection[int] | None = None) -> None:
    """The day's reservations past their expiry (or ``entry_ids``) charged at what they reserved:
    one written statement under the meter's lock, as every reservation runs it (the ORM's
    query and an update per row cost ~0.6 ms of CPU a reservation, nearly always for no row)."""
    table = connection.ops.quote_name(LedgerEntry._meta.db_table)
    which, value = ("id = ANY(%s)", list(entry_ids)) if entry_ids is not None else ("expires_at < %s", now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH gone AS (UPDATE {table} SET status = %s, amount_usd = reserved_usd, settled_at = %s "
            f"WHERE day = %s AND status = %s AND {which} RETURNING reserved_usd) "
            "SELECT coalesce(sum(reserved_usd), 0) FROM gone",
            [LedgerEntry.Status.EXPIRED, now, meter.day, LedgerEntry.Status.RESERVED, value])
        expired = cursor.fetchone()[0]
    meter.reserved_usd -= expired
    meter.spent_usd += expired


_COMMITTED = Sum(Case(When(status=LedgerEntry.Status.RESERVED, then=F("reserved_usd")), default=F("amount_usd")))


def budget_reserve(*, amount_usd: Decimal, conversation_id: uuid.UUID | str | None = None, ip_hash: str = "",
                   note: str = "", settle: Sequence[tuple[int, Decimal]] = ()) -> LedgerEntry:
    """Reserve a model call's worst-case cost, or raise BudgetRefused. ``settle``: the turn's
    earlier calls, (entry, real cost), settled first in the same transaction (``budget_settle``);
    a refusal leaves them reserved, for the caller to settle later."""
    ceiling = settings.TWIN_DAILY_BUDGET_USD
    try:
        with transaction.atomic():
            now = timezone.now()
            budgets_settle(settle)  # its days' meters first (locked in order), then today's again
            meter = _meter(budget_day(now))
            _expire(meter, now)
            committed = meter.spent_usd + meter.reserved_usd + amount_usd
            if committed > ceiling:
                meter.save()
                early_exhausted()
                raise BudgetRefused("daily_limit")
            today = LedgerEntry.objects.filter(day=meter.day)
            if committed > ceiling * (1 - Decimal(str(settings.TWIN_BUDGET_RESERVE))):
                # the reserve: the day's last part is for addresses that have used little of it,
                # so a few spending flat out cannot leave nothing for new visitors
                used = (today.filter(ip_hash=ip_hash).aggregate(total=_COMMITTED)["total"] or Decimal("0")) \
                    if ip_hash else ceiling
                if used + amount_usd > ceiling * Decimal(str(settings.TWIN_BUDGET_RESERVE_IP_SHARE)):
                    meter.save()
                    raise BudgetRefused("reserve")
            for reason, share, query in (
                ("conversation_share", settings.TWIN_BUDGET_CONVERSATION_SHARE,
                 today.filter(conversation_id=conversation_id) if conversation_id else None),
                ("ip_share", settings.TWIN_BUDGET_IP_SHARE, today.filter(ip_hash=ip_hash) if ip_hash else None),
            ):
                if query is not None and share < 1:
                    used = query.aggregate(total=_COMMITTED)["total"] or Decimal("0")
                    if used + amount_usd > ceiling * Decimal(str(share)):
                        meter.save()
                        raise BudgetRefused(reason)
            entry = LedgerEntry.objects.create(
                day=meter.day, status=LedgerEntry.Status.RESERVED, reserved_usd=amount_usd,
                conversation_id=conversation_id, ip_hash=ip_hash, note=note[:120],
                expires_at=now + dt.timedelta(seconds=settings.TWIN_BUDGET_RESERVATION_TTL))
            meter.reserved_usd += amount_usd
            meter.save()
            return entry
    except DatabaseError as exc:
        log.exception("budget reservation failed; failing closed")
        raise BudgetRefused("unavailable") from exc


def budget_settle(*, entry_id: int, amount_usd: Decimal) -> LedgerEntry:
    """Replace a reservation by the call's real cost (once: a settled entry stays as it is)."""
    with transaction.atomic():
        # an entry's day never changes: read without a lock, in the same transaction
        day = LedgerEntry.objects.values_list("day", flat=True).get(pk=entry_id)
        meter = _meter(day)  # the meter first, then the entry: the same order as _expire (no deadlock)
        entry, settled = _settle_on(meter, entry_id, amount_usd, timezone.now())
        if settled:
            meter.save()
        return entry


def budgets_settle(settlements: Sequence[tuple[int, Decimal]], *, turn_id: int | None = None) -> set[int]:
    """``budget_settle`` of each (entry, real cost), inside the caller's transaction (a turn's
    record: ``chat.turns.records``): the meter's row lock is taken here and held until the
    caller commits, so call this last. Returns the entries it settled (those still reserved);
    ``turn_id``: these are linked to that turn in the same statement (``entries_link``)."""
    done: set[int] = set()
    if not settlements:
        return done
    days = dict(LedgerEntry.objects.filter(pk__in=[entry_id for entry_id, _ in settlements]).values_list("pk", "day"))
    now = timezone.now()
    for day in sorted(set(days.values())):
        meter = _meter(day)  # the meter first, then the entries, as everywhere
        for entry_id, reserved, spent in _settle_all(
                [(entry_id, amount) for entry_id, amount in settlements if days.get(entry_id) == day], now, turn_id):
            meter.reserved_usd -= reserved
            meter.spent_usd += spent
            done.add(entry_id)
        meter.save()
    return done


def _settle_all(settlements: Sequence[tuple[int, Decimal]], now: dt.datetime,
                turn_id: int | None) -> list[tuple[int, Decimal, Decimal]]:
    """``_settle_on`` of each entry of one day (its meter locked by the caller) in one statement:
    the entries still reserved are settled (a settled or expired one stays as it is); returns
    (entry, what it had reserved, what it cost) of each one settled."""
    table = connection.ops.quote_name(LedgerEntry._meta.db_table)
    rows = ", ".join(["(%s, %s::numeric)"] * len(settlements))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS e SET status = %s, amount_usd = v.amount, settled_at = %s, "
            "turn_id = COALESCE(%s, e.turn_id) "
            f"FROM (VALUES {rows}) AS v(id, amount) WHERE e.id = v.id AND e.status = %s "
            "RETURNING e.id, e.reserved_usd, v.amount",
            [LedgerEntry.Status.SETTLED, now, turn_id, *(x for pair in settlements for x in pair),
             LedgerEntry.Status.RESERVED])
        return cursor.fetchall()


def _settle_on(meter: BudgetDay, entry_id: int, amount_usd: Decimal, now: dt.datetime) -> tuple[LedgerEntry, bool]:
    """Settle one entry of ``meter``'s day (locked by the caller, who saves it); whether it was
    still reserved (a settled or expired entry stays as it is)."""
    entry = LedgerEntry.objects.select_for_update().get(pk=entry_id)
    if entry.status != LedgerEntry.Status.RESERVED:
        return entry, False
    meter.reserved_usd -= entry.reserved_usd
    meter.spent_usd += amount_usd
    entry.status = LedgerEntry.Status.SETTLED
    entry.amount_usd = amount_usd
    entry.settled_at = now
    entry.save(update_fields=["status", "amount_usd", "settled_at"])
    return entry, True


def budget_charge(*, amount_usd: Decimal, note: str = "", conversation_id: uuid.UUID | str | None = None,
                  ip_hash: str = "") -> LedgerEntry:
    """A cost known only afterwards (no reservation): recorded and counted at once."""
    with transaction.atomic():
        meter = _meter(budget_day())
        meter.spent_usd += amount_usd
        meter.save()
        return LedgerEntry.objects.create(day=meter.day, status=LedgerEntry.Status.SETTLED, amount_usd=amount_usd,
                                          conversation_id=conversation_id, ip_hash=ip_hash, note=note[:120],
                                          settled_at=timezone.now())


def reservations_expire(*, entry_ids: Collection[int] | None = None) -> int:
    """Expire the reservations of turns that died (the worker runs this): those past their expiry
    time, or ``entry_ids`` at once (the turn sweeper knows their turn is dead)."""
    count = 0
    now = timezone.now()
    due = LedgerEntry.objects.filter(status=LedgerEntry.Status.RESERVED)
    due = due.filter(pk__in=entry_ids) if entry_ids is not None else due.filter(expires_at__lt=now)
    for day in due.values_list("day", flat=True).distinct():
        with transaction.atomic():
            meter = _meter(day)
            before = meter.reserved_usd
            _expire(meter, now, entry_ids)
            meter.save()
            count += int(before != meter.reserved_usd)
    return count


@transaction.atomic
def entries_link(*, entry_ids: Collection[int], turn_id: int) -> int:
    """Link a turn's ledger entries (one per model call) to its TurnLog, once it is recorded."""
    return LedgerEntry.objects.filter(pk__in=entry_ids).update(turn_id=turn_id)


def ledger_forget(*, conversation_ids) -> int:
    """Unlink the ledger from these conversations (retention purge, a visitor's deletion request):
    the amounts stay, since the day's meter and its audit rest on them; the link to the
    conversation and its turns goes, and so does the address hash of past days (today's still
    counts towards the address's share of today's budget)."""
    ids = list(LedgerEntry.objects.filter(conversation_id__in=conversation_ids).values_list("pk", flat=True))
    LedgerEntry.objects.filter(pk__in=ids, day__lt=budget_day()).update(ip_hash="")
    return LedgerEntry.objects.filter(pk__in=ids).update(conversation=None, turn=None)

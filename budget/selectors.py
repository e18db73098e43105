"""Reads of the budget meter and the ledger (no locks: for reports and the guard's early check;
the decision to call a model is ``services.budget_reserve``, under the meter's row lock)."""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from decimal import Decimal

from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from budget.models import BudgetDay, LedgerEntry

log = logging.getLogger(__name__)


def budget_day(now: dt.datetime | None = None) -> dt.date:
    """The budget day in the site's time zone: the meter resets at local midnight."""
    return timezone.localdate(now or timezone.now())


def budget_spent(*, day: dt.date | None = None) -> Decimal:
    """Settled spend plus open reservations of the day."""
    meter = BudgetDay.objects.filter(day=day or budget_day()).first()
    return (meter.spent_usd + meter.reserved_usd) if meter else Decimal("0")


def budget_exhausted() -> bool:
    """True when today's spend reached the limit. Fails closed: an unreadable meter is exhausted."""
    try:
        return budget_spent() >= settings.TWIN_DAILY_BUDGET_USD
    except DatabaseError:
        log.exception("budget meter unreadable; failing closed")
        return True


# The guard's early check, per process: (monotonic time read, budget day, exhausted).
_early: tuple[float, dt.date, bool] | None = None


def budget_exhausted_early() -> bool:
    """``budget_exhausted()`` for the guard's early check, as read at most
    ``TWIN_BUDGET_CHECK_SECONDS`` ago on the same budget day; per process only.

    The early check only spares a turn the screen and the prompt when the day is used up; the
    decision to call a model is ``services.budget_reserve``, under the meter's row lock. So a turn
    let through by a reading a second old is refused there when the budget ran out meanwhile
    (the same words to the visitor, and an incident). A refusal for the daily limit in this
    process (``early_exhausted``) ends the cached reading at once; so does a new budget day."""
    global _early  # noqa: PLW0603 (one reading per process)
    kept = budget_exhausted_kept()
    if kept is not None:
        return kept
    now, day = time.monotonic(), budget_day()
    exhausted = budget_exhausted()
    _early = (now, day, exhausted)
    return exhausted


def budget_exhausted_kept() -> bool | None:
    """``budget_exhausted_early``'s reading while it is fresh (no database), else None."""
    cached = _early
    if cached is not None and cached[1] == budget_day() and \
            time.monotonic() - cached[0] < settings.TWIN_BUDGET_CHECK_SECONDS:
        return cached[2]
    return None


def early_exhausted() -> None:
    """This process found the day's budget used up: the early check says so from now on (until
    the reading is ``TWIN_BUDGET_CHECK_SECONDS`` old, then it reads the meter again)."""
    global _early  # noqa: PLW0603
    _early = (time.monotonic(), budget_day(), True)


def budget_today() -> dict:
    """Today's meter: settled spend, open reservations, the limit and whether it is reached
    (the same rule as ``budget_exhausted``). Raises ``DatabaseError`` when unreadable."""
    meter = BudgetDay.objects.filter(day=budget_day()).first()
    spent = meter.spent_usd if meter else Decimal("0")
    reserved = meter.reserved_usd if meter else Decimal("0")
    limit = settings.TWIN_DAILY_BUDGET_USD
    return {"day": budget_day(), "spent_usd": spent, "reserved_usd": reserved, "limit_usd": limit,
            "exhausted": spent + reserved >= limit}


def open_reservations(*, conversation_id: uuid.UUID | str, since: dt.datetime,
                      until: dt.datetime | None = None) -> list[int]:
    """A conversation's reservations made in [since, until) and neither settled nor linked to a
    turn: what a turn that died left open (the turn sweeper charges them)."""
    entries = LedgerEntry.objects.filter(conversation_id=conversation_id, status=LedgerEntry.Status.RESERVED,
                                         turn__isnull=True, created_at__gte=since)
    if until is not None:
        entries = entries.filter(created_at__lt=until)
    return list(entries.values_list("pk", flat=True))


def entries_amount(*, entry_ids: list[int]) -> Decimal:
    """What these entries charge (their amount, once settled or expired)."""
    return sum(LedgerEntry.objects.filter(pk__in=entry_ids).values_list("amount_usd", flat=True), Decimal("0"))

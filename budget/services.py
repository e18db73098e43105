"""The daily dollar budget. The ledger lives in Postgres, so a restart cannot reset it."""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Sum
from django.utils import timezone

from budget.models import LedgerEntry

log = logging.getLogger(__name__)


def budget_day(now: dt.datetime | None = None) -> dt.date:
    """The budget day in the site's time zone: the meter resets at local midnight."""
    return timezone.localdate(now or timezone.now())


def budget_spent(*, day: dt.date | None = None) -> Decimal:
    total = LedgerEntry.objects.filter(day=day or budget_day()).aggregate(total=Sum("amount_usd"))["total"]
    return total or Decimal("0")


def budget_exhausted() -> bool:
    """True when today's spend reached the limit. Fails closed: an unreadable ledger is exhausted."""
    try:
        return budget_spent() >= settings.TWIN_DAILY_BUDGET_USD
    except DatabaseError:
        log.exception("budget ledger unreadable; failing closed")
        return True


@transaction.atomic
def budget_charge(*, amount_usd: Decimal, turn_id: int | None = None, note: str = "") -> LedgerEntry:
    return LedgerEntry.objects.create(day=budget_day(), amount_usd=amount_usd, turn_id=turn_id, note=note[:120])

"""A turn's calls settled with its next reservation or its record, not each in a transaction of
its own (``budget_reserve(settle=...)``, ``budgets_settle``): the same meter as settling at once."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import transaction

from budget.models import BudgetDay, LedgerEntry
from budget.services import BudgetRefused, budget_reserve, budgets_settle

pytestmark = pytest.mark.django_db


def meter(day: dt.date | None = None) -> tuple[Decimal, Decimal]:
    row = BudgetDay.objects.get(day=day) if day else BudgetDay.objects.get()
    return row.reserved_usd, row.spent_usd


def test_the_next_reservation_settles_the_last_call_first(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    first = budget_reserve(amount_usd=Decimal("0.60"))
    # 0.60 reserved and 0.50 more would pass the ceiling, but the first call cost 0.10
    second = budget_reserve(amount_usd=Decimal("0.50"), settle=[(first.pk, Decimal("0.10"))])
    assert meter() == (Decimal("0.50"), Decimal("0.10"))
    assert LedgerEntry.objects.get(pk=first.pk).status == "settled"
    assert LedgerEntry.objects.get(pk=second.pk).status == "reserved"


def test_a_refused_reservation_leaves_the_settlement_to_the_caller(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    first = budget_reserve(amount_usd=Decimal("0.60"))
    with pytest.raises(BudgetRefused, match="daily_limit"):
        budget_reserve(amount_usd=Decimal("0.95"), settle=[(first.pk, Decimal("0.10"))])
    assert meter() == (Decimal("0.60"), 0) and LedgerEntry.objects.get(pk=first.pk).status == "reserved"
    with transaction.atomic():
        budgets_settle([(first.pk, Decimal("0.10"))])
    assert meter() == (0, Decimal("0.10"))
    budgets_settle([(first.pk, Decimal("0.90"))])  # once: a settled entry stays as it is
    assert meter() == (0, Decimal("0.10"))


def test_calls_of_two_days_settle_on_their_own_days_meters(settings):
    yesterday_entry = budget_reserve(amount_usd=Decimal("0.30"))
    today = yesterday_entry.day
    yesterday = today - dt.timedelta(days=1)
    BudgetDay.objects.filter(day=today).update(day=yesterday)
    LedgerEntry.objects.filter(pk=yesterday_entry.pk).update(day=yesterday)
    today_entry = budget_reserve(amount_usd=Decimal("0.20"))
    budgets_settle([(today_entry.pk, Decimal("0.05")), (yesterday_entry.pk, Decimal("0.01"))])
    assert meter(yesterday) == (0, Decimal("0.01")) and meter(today) == (0, Decimal("0.05"))

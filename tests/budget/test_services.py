from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from budget.services import budget_charge, budget_day, budget_exhausted, budget_spent

pytestmark = pytest.mark.django_db


def test_spend_accumulates_per_local_day_and_fails_closed_at_the_limit(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("0.50")
    budget_charge(amount_usd=Decimal("0.30"))
    assert not budget_exhausted()
    budget_charge(amount_usd=Decimal("0.20"))
    assert budget_spent() == Decimal("0.50") and budget_exhausted()
    assert budget_spent(day=budget_day() - dt.timedelta(days=1)) == 0


def test_zero_budget_means_closed(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("0")
    assert budget_exhausted()

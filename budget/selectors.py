"""Reads of the budget meter (no locks: for reports, never for the decision to call a model)."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings

from budget.models import BudgetDay
from budget.services import budget_day


def budget_today() -> dict:
    """Today's meter: settled spend, open reservations, the limit and whether it is reached
    (the same rule as ``budget_exhausted``). Raises ``DatabaseError`` when unreadable."""
    meter = BudgetDay.objects.filter(day=budget_day()).first()
    spent = meter.spent_usd if meter else Decimal("0")
    reserved = meter.reserved_usd if meter else Decimal("0")
    limit = settings.TWIN_DAILY_BUDGET_USD
    return {"day": budget_day(), "spent_usd": spent, "reserved_usd": reserved, "limit_usd": limit,
            "exhausted": spent + reserved >= limit}

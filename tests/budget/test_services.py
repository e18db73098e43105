"""The daily budget: reserve before a model call, settle after it, never overspend."""

from __future__ import annotations

import asyncio
import datetime as dt
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async
from django.db import DatabaseError, connection
from django.utils import timezone

from budget import selectors, services
from budget.models import BudgetDay, LedgerEntry
from budget.selectors import budget_day, budget_exhausted, budget_spent
from budget.services import (
    BudgetRefused,
    budget_charge,
    budget_reserve,
    budget_settle,
    reservations_expire,
)
from tests.concurrently import at_once

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


def test_reserve_then_settle_to_the_real_cost(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    entry = budget_reserve(amount_usd=Decimal("0.40"))
    meter = BudgetDay.objects.get()
    assert (meter.reserved_usd, meter.spent_usd) == (Decimal("0.40"), 0)
    assert budget_spent() == Decimal("0.40")  # reservations count against the ceiling
    with pytest.raises(BudgetRefused, match="daily_limit"):
        budget_reserve(amount_usd=Decimal("0.61"))
    budget_settle(entry_id=entry.pk, amount_usd=Decimal("0.05"))
    budget_settle(entry_id=entry.pk, amount_usd=Decimal("0.99"))  # settling twice changes nothing
    meter.refresh_from_db()
    assert (meter.reserved_usd, meter.spent_usd) == (0, Decimal("0.05"))
    assert LedgerEntry.objects.get(pk=entry.pk).status == "settled"
    budget_reserve(amount_usd=Decimal("0.61"))  # room again


def test_a_dead_turns_reservation_expires_at_its_worst_case(settings):
    entry = budget_reserve(amount_usd=Decimal("0.30"))
    LedgerEntry.objects.filter(pk=entry.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert reservations_expire() == 1
    entry.refresh_from_db()
    meter = BudgetDay.objects.get()
    assert (entry.status, entry.amount_usd) == ("expired", Decimal("0.30"))
    assert (meter.reserved_usd, meter.spent_usd) == (0, Decimal("0.30"))


def test_one_visitor_cannot_starve_the_rest(settings):
    from chat.services import conversation_create

    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    settings.TWIN_BUDGET_CONVERSATION_SHARE = 0.2
    settings.TWIN_BUDGET_IP_SHARE = 0.3
    first, second = conversation_create(), conversation_create()
    budget_reserve(amount_usd=Decimal("0.15"), conversation_id=first.pk, ip_hash="ip-a")
    with pytest.raises(BudgetRefused, match="conversation_share"):
        budget_reserve(amount_usd=Decimal("0.10"), conversation_id=first.pk, ip_hash="ip-a")
    budget_reserve(amount_usd=Decimal("0.15"), conversation_id=second.pk, ip_hash="ip-a")
    with pytest.raises(BudgetRefused, match="ip_share"):
        budget_reserve(amount_usd=Decimal("0.10"), conversation_id=conversation_create().pk, ip_hash="ip-a")
    budget_reserve(amount_usd=Decimal("0.10"), conversation_id=conversation_create().pk, ip_hash="ip-b")


def test_four_addresses_spending_flat_out_leave_a_quarter_for_new_visitors(settings):
    """With the default shares (25% per address) four addresses could take the whole day; the
    reserve keeps the last quarter for addresses that have used little."""
    settings.TWIN_DAILY_BUDGET_USD = Decimal("2.00")
    settings.TWIN_BUDGET_CONVERSATION_SHARE = 1.0
    settings.TWIN_BUDGET_IP_SHARE = 0.25
    settings.TWIN_BUDGET_RESERVE = 0.30
    settings.TWIN_BUDGET_RESERVE_IP_SHARE = 0.05
    refused: list[str] = []
    for address in ("ip-a", "ip-b", "ip-c", "ip-d"):
        while True:
            try:
                budget_reserve(amount_usd=Decimal("0.04"), ip_hash=address)
            except BudgetRefused as exc:
                refused.append(exc.reason)
                break
    assert set(refused) <= {"ip_share", "reserve"} and "reserve" in refused
    day = BudgetDay.objects.get()
    assert day.reserved_usd <= Decimal("1.50")  # at least 25% left (the fourth got the reserve's 5%)
    # new visitors get it, a little each
    for address in ("ip-new-1", "ip-new-2", "ip-new-3"):
        budget_reserve(amount_usd=Decimal("0.04"), ip_hash=address)
        budget_reserve(amount_usd=Decimal("0.04"), ip_hash=address)
        with pytest.raises(BudgetRefused, match="reserve"):
            budget_reserve(amount_usd=Decimal("0.04"), ip_hash=address)  # over its 5% of the reserve
    with pytest.raises(BudgetRefused, match="reserve"):
        budget_reserve(amount_usd=Decimal("0.04"))  # no address known: not for the reserve


def test_ipv6_shares_count_per_48():
    from twinsite.clientip import share_key

    assert share_key("2001:db8:1:2::/64") == share_key("2001:db8:1:ffff::/64") == "2001:db8:1::/48"
    assert share_key("2001:db8:2:2::/64") != share_key("2001:db8:1:2::/64")
    assert share_key("198.51.100.7") == "198.51.100.7"
    assert share_key("unknown") == "unknown"


def test_a_database_error_refuses(monkeypatch):
    def broken(*args, **kwargs):
        raise DatabaseError("connection lost")

    monkeypatch.setattr(services, "_meter", broken)
    with pytest.raises(BudgetRefused, match="unavailable"):
        budget_reserve(amount_usd=Decimal("0.01"))
    monkeypatch.setattr(selectors, "budget_spent", broken)
    assert budget_exhausted()


@pytest.mark.django_db(transaction=True)
def test_fifty_threads_never_reserve_past_the_ceiling(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    settings.TWIN_BUDGET_RESERVE = 0.0  # the ceiling itself, under contention
    granted: list[int] = []

    def reserve() -> None:
        try:
            granted.append(budget_reserve(amount_usd=Decimal("0.09")).pk)
        except BudgetRefused:
            pass

    at_once(*[reserve] * 50)
    assert len(granted) == 11  # 11 x 0.09 = 0.99 <= 1.00 < 12 x 0.09
    assert BudgetDay.objects.get().reserved_usd == Decimal("0.99")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("kb", "checkpoint_pool")
async def test_fifty_concurrent_turns_start_no_model_call_beyond_the_ceiling(settings):
    from chat.providers.base import Usage
    from chat.providers.scripted import ScriptedProvider, Step
    from chat.services import conversation_create
    from chat.turns.run import turn_run

    committed_at_start: list[Decimal] = []

    class SlowProvider(ScriptedProvider):
        async def complete(self, request, on_token):
            # what the day has spent or holds at the moment this call starts
            committed_at_start.append(await database_sync_to_async(budget_spent)())
            result = await super().complete(request, on_token)
            await asyncio.sleep(0.2)  # the calls overlap, as real ones do
            return result

    # priced as the most expensive model (unknown provider): 2,000 in + 800 out = $0.013 a call
    provider = SlowProvider([Step(text="She works at Lumora. [source: Curriculum Vitae]",
                                  usage=Usage(2_000, 0, 800)) for _ in range(50)])
    ceiling = Decimal("0.13")
    settings.TWIN_DAILY_BUDGET_USD = ceiling
    settings.TWIN_BUDGET_CONVERSATION_SHARE = 1.0

    async def one() -> str:
        conversation = await database_sync_to_async(conversation_create)()

        async def emit(event: dict) -> None:
            pass

        return (await turn_run(conversation_id=conversation.pk, text="Where does she work?", emit=emit,
                               provider=provider)).outcome

    outcomes = await asyncio.gather(*(one() for _ in range(50)))
    settled = await database_sync_to_async(lambda: list(LedgerEntry.objects.filter(status="settled")
                                                         .values_list("amount_usd", flat=True)))()
    assert provider.calls == outcomes.count("answered") == len(settled)
    assert 1 <= provider.calls <= 10 and outcomes.count("refused") == 50 - provider.calls
    assert sum(settled) <= ceiling
    assert all(committed <= ceiling for committed in committed_at_start)  # no call started beyond it
    assert await database_sync_to_async(lambda: BudgetDay.objects.get().reserved_usd)() == 0


@pytest.mark.django_db(transaction=True)
def test_a_restart_keeps_the_days_spend(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("0.10")
    settings.TWIN_BUDGET_RESERVE = 0.0
    budget_settle(entry_id=budget_reserve(amount_usd=Decimal("0.10")).pk, amount_usd=Decimal("0.10"))
    connection.close()  # a new process: nothing in memory, the meter is in Postgres
    assert budget_exhausted()


def test_budget_admin_shows_days_and_a_chart_and_nobody_edits_the_ledger(admin_client, settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("2.00")
    entry = budget_reserve(amount_usd=Decimal("0.30"))
    budget_settle(entry_id=entry.pk, amount_usd=Decimal("0.12"))
    page = admin_client.get("/admin/budget/budgetday/").content.decode()
    assert "<svg" in page and "ceiling $2.00" in page and "0.120000" in page
    ledger = admin_client.get(f"/admin/budget/ledgerentry/{entry.pk}/change/").content.decode()
    assert 'name="_save"' not in ledger
    assert admin_client.post(f"/admin/budget/ledgerentry/{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert LedgerEntry.objects.filter(pk=entry.pk).exists()


def test_the_early_check_reuses_a_fresh_reading_per_process_until_a_refusal_or_a_new_day(
        settings, monkeypatch, django_assert_num_queries):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("0.50")
    settings.TWIN_BUDGET_CHECK_SECONDS = 60.0
    monkeypatch.setattr(selectors, "_early", None)
    assert selectors.budget_exhausted_kept() is None  # nothing read yet: the guard reads on a thread
    assert not selectors.budget_exhausted_early()
    budget_charge(amount_usd=Decimal("0.50"))
    with django_assert_num_queries(0):
        assert not selectors.budget_exhausted_early()  # the reading of a moment ago
        assert selectors.budget_exhausted_kept() is False  # the same, for the event loop
    with pytest.raises(BudgetRefused):
        budget_reserve(amount_usd=Decimal("0.01"))  # the reservation decides, under the row lock
    with django_assert_num_queries(0):
        assert selectors.budget_exhausted_early()  # and this process' early check knows it now

    # a new budget day is read afresh
    tomorrow = budget_day() + dt.timedelta(days=1)
    monkeypatch.setattr(selectors, "budget_day", lambda now=None: tomorrow)
    assert selectors.budget_exhausted_kept() is None
    with django_assert_num_queries(1):
        assert not selectors.budget_exhausted_early()

    # with 0 s every call reads the meter
    monkeypatch.setattr(selectors, "budget_day", budget_day)
    settings.TWIN_BUDGET_CHECK_SECONDS = 0.0
    with django_assert_num_queries(1):
        assert selectors.budget_exhausted_early()
    assert selectors.budget_exhausted_kept() is None

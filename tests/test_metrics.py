"""``/metrics``: who may read it, and that its numbers are the database's."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client

from approvals.models import ContactMessage, PendingApproval
from approvals.services import approval_request
from budget.models import BudgetDay
from budget.selectors import budget_day
from chat.models import TurnLog
from chat.services import conversation_create
from guards.models import GuardIncident

pytestmark = pytest.mark.django_db
METRICS_TOKEN = "m" * 32
ADMIN_TOKEN = "a" * 32
SAMPLE = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$')


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    """Samples by (name, labels); every sample belongs to a metric declared by # TYPE before it."""
    samples: dict[tuple[str, frozenset], float] = {}
    declared: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            declared.add(line.split()[2])
            continue
        if line.startswith("#") or not line:
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.groups()
        assert name in declared or re.sub(r"_(total|bucket|sum|count)$", "", name) in declared, line
        pairs = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels or ""))
        samples[(name, pairs)] = float(value)
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


@pytest.fixture
def seeded(db):
    conversation = conversation_create()
    for outcome, latency, tokens, cost in (("answered", 80, (1000, 800, 20), "0.000192"),
                                           ("answered", 300, (500, 0, 40), "0.000264"),
                                           ("refused", 12_000, (0, 0, 0), "0")):
        TurnLog.objects.create(conversation=conversation, outcome=outcome, provider="openai", model="gpt-4.1-mini",
                               input_tokens=tokens[0], cached_tokens=tokens[1], output_tokens=tokens[2],
                               cost_usd=Decimal(cost), latency_ms=latency)
    for guard in ("injection", "injection", "card_number"):
        GuardIncident.objects.create(conversation=conversation, guard=guard)
    today = budget_day()
    BudgetDay.objects.create(day=today, spent_usd=Decimal("0.5"), reserved_usd=Decimal("0.1"))
    BudgetDay.objects.create(day=today - dt.timedelta(days=1), spent_usd=Decimal("1.25"))
    approval, _ = approval_request(
        conversation_id=conversation.pk, tool_call_id="call_1", tool_name="draft_contact_message",
        arguments={"visitor_name": "Tom", "visitor_email": "tom@example.com", "message": "Hello"},
        visitor_texts=["I'm Tom, tom@example.com"])
    PendingApproval.objects.filter(pk=approval.pk).update(created_at=approval.created_at - dt.timedelta(hours=2))
    ContactMessage.objects.create(approval=approval, idempotency_key="k1", body="Hello")
    return conversation


def test_without_a_token_configured_metrics_do_not_exist(settings):
    settings.TWIN_METRICS_TOKEN = settings.TWIN_ADMIN_TOKEN = ""
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer anything-at-all-anything").status_code == 404


def test_a_missing_or_wrong_token_is_401_and_either_token_or_permitted_staff_is_let_in(settings, seeded):
    settings.TWIN_METRICS_TOKEN, settings.TWIN_ADMIN_TOKEN = METRICS_TOKEN, ADMIN_TOKEN
    client = Client()
    missing = client.get("/metrics")
    assert missing.status_code == 401 and missing["WWW-Authenticate"].startswith("Bearer")
    assert missing.json()["error"]["code"] == "unauthorized"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer " + "x" * 32).status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {METRICS_TOKEN}").status_code == 401
    for token in (METRICS_TOKEN, ADMIN_TOKEN):
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    assert client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}").status_code == 405
    from django.contrib.auth.models import Permission

    staff = Client()
    ops = User.objects.create_user("ops", password="pw-123456789", is_staff=True)
    staff.force_login(ops)
    assert staff.get("/metrics").status_code == 401  # staff, not given chat.view_trace
    ops.user_permissions.add(Permission.objects.get(codename="view_trace"))
    staff.force_login(User.objects.get(pk=ops.pk))
    assert staff.get("/metrics").status_code == 200
    visitor = Client()
    visitor.force_login(User.objects.create_user("visitor", password="pw-123456789"))
    assert visitor.get("/metrics").status_code == 401  # logged in, but not staff


def test_the_numbers_are_the_seeded_rows(settings, seeded):
    settings.TWIN_METRICS_TOKEN = METRICS_TOKEN
    settings.TWIN_DAILY_BUDGET_USD = Decimal("2.00")
    body = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}").content.decode()
    samples = parse(body)
    assert value(samples, "twinsite_turns_total", outcome="answered", provider="openai") == 2
    assert value(samples, "twinsite_turns_total", outcome="refused", provider="openai") == 1
    assert value(samples, "twinsite_turn_tokens_total", kind="input") == 1500
    assert value(samples, "twinsite_turn_tokens_total", kind="cached") == 800
    assert value(samples, "twinsite_turn_tokens_total", kind="output") == 60
    assert value(samples, "twinsite_turn_cost_usd_total") == pytest.approx(0.000456)
    # latencies 0.08 s, 0.3 s, 12 s: cumulative buckets
    buckets = {le: value(samples, "twinsite_turn_latency_seconds_bucket", le=le)
               for le in ("0.1", "0.25", "0.5", "10", "20", "+Inf")}
    assert buckets == {"0.1": 1, "0.25": 1, "0.5": 2, "10": 2, "20": 3, "+Inf": 3}
    assert value(samples, "twinsite_turn_latency_seconds_sum") == pytest.approx(12.38)
    assert value(samples, "twinsite_turn_latency_seconds_count") == 3
    assert value(samples, "twinsite_refusals_total", guard="injection") == 2
    assert value(samples, "twinsite_refusals_total", guard="card_number") == 1
    assert value(samples, "twinsite_refusals_total", guard="budget") == 0  # every guard, also at zero
    assert value(samples, "twinsite_spend_usd_total") == pytest.approx(1.75)
    assert value(samples, "twinsite_budget_today_spent_usd") == pytest.approx(0.5)
    assert value(samples, "twinsite_budget_today_reserved_usd") == pytest.approx(0.1)
    assert value(samples, "twinsite_budget_daily_limit_usd") == 2
    assert value(samples, "twinsite_budget_exhausted") == 0
    assert value(samples, "twinsite_approvals_pending") == 1
    assert value(samples, "twinsite_approvals", status="pending") == 1
    assert value(samples, "twinsite_approvals", status="approved") == 0
    assert 7190 < value(samples, "twinsite_approvals_oldest_pending_seconds") < 7300
    assert value(samples, "twinsite_contact_messages_unsent") == 1
    assert "# TYPE twinsite_turn_latency_seconds histogram" in body
    assert "# TYPE twinsite_turns counter" in body and "# TYPE twinsite_approvals_pending gauge" in body


def test_an_empty_database_gives_zeros_not_errors(settings):
    settings.TWIN_METRICS_TOKEN = METRICS_TOKEN
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}")
    samples = parse(response.content.decode())
    assert value(samples, "twinsite_turn_latency_seconds_count") == 0
    assert value(samples, "twinsite_turn_latency_seconds_bucket", le="+Inf") == 0
    assert value(samples, "twinsite_spend_usd_total") == 0
    assert value(samples, "twinsite_approvals_pending") == 0
    assert value(samples, "twinsite_approvals_oldest_pending_seconds") == 0

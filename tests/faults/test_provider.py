"""The model provider down, slow, answering 429 or 5xx, or cutting its stream, through whole turns
over real HTTP (the fake server on loopback) and real Postgres: retried before the first token
only, a clean abort after it, and the call's budget reservation settled to what it may have cost."""

from __future__ import annotations

from decimal import Decimal

import pytest
from channels.db import database_sync_to_async

from budget.models import BudgetDay, LedgerEntry
from chat.models import TurnLog
from chat.providers.openai_compat import OpenAICompatibleProvider
from chat.services import conversation_create
from chat.turns import turn_run
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text
from tests.faults.conftest import free_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb", "checkpoint_pool")]
ANSWER = ("She ", "builds ", "bookkeeping ", "software.")
FAILED = '{"error": {"message": "try later"}}'

CASES = {
    # name: (replies, requests the client makes, outcome, error code, streamed text)
    "down": ([], 3, "error", "provider_error", ""),
    "429_then_ok": ([Reply(429, [FAILED], headers={"Retry-After": "0"}), Reply(chunks=sse_text(*ANSWER))],
                    2, "declined", "", "".join(ANSWER)),
    "5xx_then_ok": ([Reply(503, [FAILED]), Reply(500, [FAILED]), Reply(chunks=sse_text(*ANSWER))],
                    3, "declined", "", "".join(ANSWER)),
    "5xx_always": ([Reply(502, [FAILED])] * 3, 3, "error", "provider_error", ""),
    "slow_then_ok": ([Reply(chunks=sse_text("too ", "late"), wait=2.0), Reply(chunks=sse_text(*ANSWER))],
                     2, "declined", "", "".join(ANSWER)),
    "cut_before_a_token": ([Reply(chunks=sse_text(*ANSWER), cut_after=1), Reply(chunks=sse_text(*ANSWER))],
                           2, "declined", "", "".join(ANSWER)),
    "cut_after_tokens": ([Reply(chunks=sse_text(*ANSWER), cut_after=3), Reply(chunks=sse_text("never"))],
                         1, "aborted", "aborted", "She builds "),
}


@pytest.mark.parametrize("case", CASES)
async def test_provider_faults_retry_before_the_first_token_only_and_settle_the_budget(case):
    replies, requests, outcome, code, streamed = CASES[case]
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    conversation = await database_sync_to_async(conversation_create)()
    with FakeOpenAI() as fake:
        for reply in replies:
            fake.add(reply)
        url = f"http://127.0.0.1:{free_port()}/v1" if case == "down" else fake.base_url  # nothing listens there
        provider = OpenAICompatibleProvider(name="gemini", model="gemini-3-flash-preview", base_url=url,
                                            api_key="test-key-0000", timeout=0.5, max_attempts=3, backoff=0.0)
        result = await turn_run(conversation_id=conversation.pk, text="What does she build?", emit=emit,
                                provider=provider)
        made = len(fake.requests)

    # what the visitor sees
    assert made == (0 if case == "down" else requests)
    assert "".join(e["text"] for e in events if e["type"] == "token") == streamed  # nothing shown twice
    errors = [e for e in events if e["type"] == "error"]
    assert [(e["code"], e["in_turn"]) for e in errors] == ([(code, True)] if code else [])
    assert events[-1]["type"] == "done" and result.outcome == events[-1]["outcome"] == outcome
    # what is stored
    turn = await TurnLog.objects.aget()
    assert (turn.outcome, turn.error_code) == (outcome, code)
    [entry] = [e async for e in LedgerEntry.objects.all()]
    assert entry.status == "settled" and entry.turn_id == turn.pk and entry.reserved_usd > 0
    if case == "cut_after_tokens":
        assert entry.amount_usd == entry.reserved_usd  # text was produced, no usage came: the worst case
    elif streamed:
        assert 0 < entry.amount_usd < entry.reserved_usd  # the real usage of the call that answered
    else:
        assert entry.amount_usd == 0  # nothing was produced
    meter = await BudgetDay.objects.aget()
    assert (meter.reserved_usd, meter.spent_usd, turn.cost_usd) == (Decimal("0"), entry.amount_usd, entry.amount_usd)

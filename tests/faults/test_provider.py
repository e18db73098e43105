"""The model provider down, slow, answering 429 or 5xx, or cutting its stream, through whole turns
over real HTTP (the fake server on loopback) and real Postgres: retried before the first token
only, a clean abort after it, and the call's budget reservation settled to what it may have cost."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from channels.db import database_sync_to_async

from budget.models import BudgetDay, LedgerEntry
from chat.models import TurnLog
from chat.providers.openai_compat import OpenAICompatibleProvider
from chat.services import TurnRejected, conversation_create
from chat.texts import text as say
from chat.turns.run import OVERLOADED_RETRY, running_turns, turn_run
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


def slow_provider(fake: FakeOpenAI) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(name="gemini", model="gemini-3-flash-preview", base_url=fake.base_url,
                                    api_key="test-key-0000", timeout=60, max_attempts=1, backoff=0.0)


@pytest.mark.parametrize("shown", [False, True])
async def test_a_turn_past_its_deadline_is_stopped_said_and_settled(settings, shown):
    """TWIN_TURN_DEADLINE ends a turn whose model is still working (here it would take 20 s more):
    the visitor is told (``deadline``), the turn is recorded and its reservation settled."""
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    conversation = await database_sync_to_async(conversation_create)()
    with FakeOpenAI() as fake:
        # a first turn loads what a process loads once (the guard's and search's models), which
        # can take longer than the deadline below on a cold process
        fake.add(Reply(chunks=sse_text(*ANSWER)))
        await turn_run(conversation_id=(await database_sync_to_async(conversation_create)()).pk,
                       text="What does she build?", emit=lambda event: asyncio.sleep(0),
                       provider=slow_provider(fake))
        await TurnLog.objects.all().adelete()
        await LedgerEntry.objects.all().adelete()
        settings.TWIN_TURN_DEADLINE = 1.0
        # silent for 20 s, or a word at once and then one every 10 s
        words = sse_text("She ", "builds ", "more ")
        fake.add(Reply(chunks=[words[0] + words[1], *words[2:]], delay=10.0) if shown
                 else Reply(chunks=sse_text(*ANSWER), wait=20.0))
        result = await asyncio.wait_for(turn_run(conversation_id=conversation.pk, text="What does she build?",
                                                 emit=emit, provider=slow_provider(fake)), timeout=15)
    [error] = [e for e in events if e["type"] == "error"]
    assert (error["code"], error["in_turn"]) == ("deadline", True)
    assert error["message"] == say("error.deadline", "en")
    outcome = "aborted" if shown else "error"
    assert events[-1]["type"] == "done" and events[-1]["outcome"] == result.outcome == outcome
    assert "".join(e["text"] for e in events if e["type"] == "token") == ("She " if shown else "")
    turn = await TurnLog.objects.aget()
    assert (turn.outcome, turn.error_code) == (outcome, "deadline")
    [entry] = [e async for e in LedgerEntry.objects.filter(turn=turn)]
    assert entry.status == "settled"
    # text was produced with no usage: charged the worst case; nothing shown: the server was
    # still at work, so at least its prompt
    if shown:
        assert entry.amount_usd == entry.reserved_usd
    else:
        assert 0 < entry.amount_usd < entry.reserved_usd
    assert (await BudgetDay.objects.aget()).reserved_usd == 0


async def test_a_saturated_process_refuses_the_next_turn_at_once(settings):
    """TWIN_PROCESS_TURNS: with the process's turns all waiting on the model, the next visitor is
    told ``overloaded`` at once (not after a wait for a connection); afterwards turns run again."""
    settings.TWIN_PROCESS_TURNS = 2
    conversations = [await database_sync_to_async(conversation_create)() for _ in range(4)]
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    with FakeOpenAI() as fake:
        for _ in range(3):
            fake.add(Reply(chunks=sse_text(*ANSWER), wait=3.0))
        provider = slow_provider(fake)
        running = [asyncio.create_task(turn_run(conversation_id=c.pk, text="What does she build?", emit=emit,
                                                provider=provider)) for c in conversations[:2]]
        await asyncio.sleep(0)  # both start: a turn takes its place before its first await
        assert running_turns.count == 2
        with pytest.raises(TurnRejected) as refused:
            await turn_run(conversation_id=conversations[2].pk, text="What does she build?", emit=emit,
                           provider=provider)
        assert refused.value.code == "overloaded" and refused.value.params["retry_after"] == OVERLOADED_RETRY
        assert "try again in 10 seconds" in refused.value.text("en")
        await asyncio.gather(*running)
        assert running_turns.count == 0
        later = await turn_run(conversation_id=conversations[3].pk, text="What does she build?", emit=emit,
                               provider=provider)
        made = len(fake.requests)
    assert later.outcome != "error"
    assert made == 3  # the refused turn reached no model
    assert await TurnLog.objects.acount() == 3  # and wrote nothing

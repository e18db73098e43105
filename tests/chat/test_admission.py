"""One policy for both transports: ownership, and whatever stops a turn told as an error event."""

from __future__ import annotations

import psycopg
import pytest

from chat.services import TurnRejected
from chat.turns import admission


def test_a_conversation_is_owned_by_its_session_or_its_embed_token() -> None:
    cid = "7d1f4a5e-0000-4000-8000-000000000001"
    assert admission.conversation_owned(cid, session_conversation=cid)
    assert admission.conversation_owned(cid, session_conversation=None, token_conversation=cid)
    assert not admission.conversation_owned(cid, session_conversation="7d1f4a5e-0000-4000-8000-000000000002")
    assert not admission.conversation_owned(cid, session_conversation=None, token_conversation=None)


@pytest.mark.parametrize(("raised", "code"), [
    (TurnRejected("busy"), "busy"),
    (TurnRejected("rate_limited", seconds=7, retry_after=7), "rate_limited"),
    (psycopg.OperationalError("server closed the connection"), "unavailable"),
    (RuntimeError("a bug"), "internal"),
])
@pytest.mark.django_db(transaction=True)
async def test_whatever_stops_a_turn_becomes_one_error_event(monkeypatch, raised, code) -> None:
    async def failing_turn(**kwargs):
        raise raised

    monkeypatch.setattr(admission, "turn_run", failing_turn)
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    await admission.turn_events(conversation_id="c", text="hi", emit=emit, visitor_ip="", lang="nl")
    assert [(e["type"], e["code"], e["in_turn"]) for e in events] == [("error", code, False)]
    assert events[0]["message"]  # the visitor's sentence, in the page's language
    assert ("retry_after" in events[0]) == (code == "rate_limited")


@pytest.mark.django_db(transaction=True)
async def test_an_address_runs_at_most_its_share_of_turns_at_once(monkeypatch, settings) -> None:
    """However many sockets or API calls it opens, one address holds TWIN_MAX_TURNS_PER_IP
    running turns; the next is refused at once, and a finished turn frees its slot."""
    import asyncio

    settings.TWIN_MAX_TURNS_PER_IP = 3
    release, started, changed = asyncio.Event(), [], asyncio.Condition()

    async def slow_turn(**kwargs):
        async with changed:
            started.append(kwargs["conversation_id"])
            changed.notify_all()
        await release.wait()

    async def until_started(n: int) -> None:
        async with changed:
            await changed.wait_for(lambda: len(started) >= n)

    monkeypatch.setattr(admission, "turn_run", slow_turn)
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    def turn(n: int, ip: str = "203.0.113.9"):
        return asyncio.create_task(admission.turn_events(conversation_id=f"c{n}", text="hi", emit=emit,
                                                         visitor_ip=ip, lang="en"))

    running = [turn(n) for n in range(3)]
    await asyncio.wait_for(until_started(3), 30)
    await turn(3)  # the fourth, while three run
    assert [(e["code"], e["in_turn"]) for e in events] == [("rate_limited", False)]
    other = turn(4, ip="198.51.100.4")  # another address is not affected
    await asyncio.wait_for(until_started(4), 30)
    release.set()
    await asyncio.gather(*running, other)
    release.clear()
    again = turn(5)
    await asyncio.wait_for(until_started(5), 30)
    release.set()
    await again
    assert len(events) == 1 and sorted(started) == ["c0", "c1", "c2", "c4", "c5"]


@pytest.mark.django_db(transaction=True)
async def test_a_48_runs_at_most_its_multiple_of_turns_at_once(monkeypatch, settings) -> None:
    """Rotating through the /64s of one /48 buys no more turns at once than the /48's multiple
    of TWIN_MAX_TURNS_PER_IP (TWIN_RATE_BLOCKS); a refused turn holds nothing, and another /48 runs."""
    import asyncio

    from guards.models import OpenSocket

    settings.TWIN_MAX_TURNS_PER_IP = 1
    settings.TWIN_RATE_BLOCKS = {("v6", 48): 3}
    release, started, changed = asyncio.Event(), [], asyncio.Condition()

    async def slow_turn(**kwargs):
        async with changed:
            started.append(kwargs["conversation_id"])
            changed.notify_all()
        await release.wait()

    async def until_started(n: int) -> None:
        async with changed:
            await changed.wait_for(lambda: len(started) >= n)

    monkeypatch.setattr(admission, "turn_run", slow_turn)
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    def turn(n: int, client: str):
        return asyncio.create_task(admission.turn_events(conversation_id=f"c{n}", text="hi", emit=emit,
                                                         visitor_ip=client, lang="en"))

    running = [turn(n, f"2001:db8:7:{n}::/64") for n in range(1, 4)]  # three /64s of one /48
    await asyncio.wait_for(until_started(3), 30)
    await asyncio.wait_for(turn(4, "2001:db8:7:4::/64"), 30)  # a fourth /64 of it: refused at once, not run
    assert [(e["code"], e["in_turn"]) for e in events] == [("rate_limited", False)]
    assert await OpenSocket.objects.acount() == 3 * 2  # each running turn: its /64's slot and its /48's
    other = turn(5, "2001:db8:8:1::/64")  # another /48
    await asyncio.wait_for(until_started(4), 30)
    release.set()
    await asyncio.gather(*running, other)
    assert sorted(started) == ["c1", "c2", "c3", "c5"] and await OpenSocket.objects.acount() == 0

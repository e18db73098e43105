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

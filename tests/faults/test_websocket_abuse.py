"""A hostile client on the chat socket of a real daphne process: binary frames, broken and deeply
nested JSON, 1 MB and 10 MB frames, NUL, lone surrogates and invalid UTF-8, a flood past the turn
limit, too many sockets from one address, another visitor's conversation. Each gets an `error`
event with a code or a clean close; the server stays healthy and its memory bounded, and nothing
of a rejected frame is stored."""

from __future__ import annotations

import json

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from chat.models import Message
from chat.services import conversation_create
from tests.faults.conftest import Daphne, Visitor, session_cookie, twin_env

pytestmark = pytest.mark.django_db(transaction=True)
ASK = {"type": "ask", "text": "What has she built?"}


def rejected(visitor: Visitor, frame: str | bytes, *, text: bool | None = None) -> dict:
    visitor.ws.send(frame, text=text)
    event = visitor.event(timeout=20)
    assert event["type"] == "error" and not event["in_turn"] and event["message"]
    return event


def closed_code(visitor: Visitor) -> int | None:
    """How the server ended the socket: its close code, None when it dropped the connection."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            visitor.event(timeout=20)
    return closed.value.rcvd.code if closed.value.rcvd else None


def test_hostile_frames_get_a_code_or_a_clean_close_and_the_server_stays_healthy(kb, tmp_path, processes):
    env = twin_env(TWIN_RATE_TURNS="4/10m", TWIN_MAX_SOCKETS_PER_IP="4")
    mine, theirs = conversation_create(), conversation_create()
    cookie = session_cookie(mine.pk)
    server = Daphne(env, tmp_path / "daphne.log")
    processes.append(server)
    visitor = Visitor(server, mine.pk, cookie)
    visitor.send(ASK)
    assert visitor.until("done")[-1]["type"] == "done"  # turn 1 of 4; the models are loaded now
    # turn 2: the flood's question once, so its first-time model work (new shapes, cached
    # sentence vectors) is not counted as growth caused by the abuse
    visitor.send({"type": "ask", "text": "Where has she worked?"})
    assert visitor.until("done")[-1]["type"] == "done"
    before = server.rss_kib()

    codes = [rejected(visitor, frame)["code"] for frame in [
        b"\x00\xff\x10binary",
        "{not json",
        "[" * 8_000 + "]" * 8_000,  # 16,000 characters, 8,000 deep
        json.dumps({"type": "ask", "text": {"a": {"b": {"c": {"d": "deep"}}}}}),
        "[" * 500_000 + "]" * 500_000,
        json.dumps({"type": "ask", "text": "x" * 1_000_000}),  # 1 MB
        json.dumps({"type": "ask", "text": "nul \u0000 inside"}),
        '{"type": "ask", "text": "a lone \\ud800 surrogate"}',
        json.dumps({"type": "ask", "text": "x" * 2_001}),
        json.dumps({"type": "sync", "after": "1; DROP TABLE chat_message"}),
        json.dumps({"type": "delete_everything"}),
        json.dumps([ASK]),
    ]]
    assert codes == ["bad_request", "bad_json", "too_deep", "too_deep", "frame_too_large", "frame_too_large",
                     "control_characters", "bad_unicode", "too_long", "bad_request", "bad_request", "bad_request"]
    # 10 MB: over daphne's 1 MiB message cap; autobahn fails the connection (1009, message too
    # big; by dropping it, its default) while the client is still sending.
    with pytest.raises(ConnectionClosed) as too_big:
        visitor.ws.send(json.dumps({"type": "ask", "text": "y" * 10_000_000}))
        visitor.event(timeout=20)
    assert too_big.value.rcvd is None or too_big.value.rcvd.code == 1009
    visitor = Visitor(server, mine.pk, cookie)
    visitor.ws.send(b'{"type": "ask", "text": "\xed\xa0\x80 invalid UTF-8"}', text=True)
    assert closed_code(visitor) in (1007, None)  # a protocol violation: autobahn fails the connection

    # A flood past the limit (4 turns per 10 minutes, 2 used): each frame starts a turn or is
    # refused with a code (busy while one runs, rate_limited after the fourth).
    visitor = Visitor(server, mine.pk, cookie)
    for _ in range(30):
        visitor.send({"type": "ask", "text": "Where has she worked?"})
    refused, turns = [], 0
    while len(refused) + turns < 30:
        event = visitor.event()
        if event["type"] == "error" and not event["in_turn"]:
            refused.append(event["code"])
        turns += event["type"] == "done"
    assert 1 <= turns <= 2 and set(refused) <= {"busy", "rate_limited"}
    while turns < 2:
        visitor.send(ASK)
        turns += visitor.until("done")[-1]["type"] == "done"
    visitor.send(ASK)
    limited = visitor.until("done")[-1]
    assert limited["code"] == "rate_limited" and limited["retry_after"] > 0

    # Too many sockets from one address, and a conversation of another browser session.
    others = [Visitor(server, mine.pk, cookie) for _ in range(3)]  # with `visitor`: 4, the cap
    for other in others:  # a frame's answer: the socket's handshake (and its count) is done
        other.send({"type": "sync", "after": 0})
        assert other.until("history")[-1]["type"] == "history"
    extra = Visitor(server, mine.pk, cookie)
    assert extra.event()["code"] == "rate_limited" and closed_code(extra) == 4429
    for other in others:
        other.close()
    stranger = Visitor(server, theirs.pk, cookie)
    assert stranger.event()["code"] == "forbidden" and closed_code(stranger) == 4403

    # Still healthy, memory bounded, nothing stored from any rejected frame.
    with httpx.Client(timeout=30) as http:
        assert http.get(server.url + "/api/health").status_code == 200
    visitor.send({"type": "sync", "after": 0})
    outcomes = [m["outcome"] for m in visitor.until("history")[-1]["messages"]]
    assert len(outcomes) == 4 and set(outcomes) <= {"answered", "declined"}  # the four turns, none failed
    visitor.close()
    grown = server.rss_kib() - before
    print(f"daphne's memory: {before} KiB after the first turn, {grown:+} KiB after the abuse")
    assert grown < 32 * 1024, f"daphne grew by {grown} KiB"  # seen: about 1 MiB
    stored = list(Message.objects.filter(role="user").values_list("content", flat=True))
    assert len(stored) == 4 and set(stored) <= {ASK["text"], "Where has she worked?"}
    assert not Message.objects.filter(conversation=theirs).exists()

"""A full turn over a real WebSocket (Channels' communicator) against real Postgres."""

from __future__ import annotations

import json
import uuid

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from chat.models import AgentTrace, Message, TurnLog
from chat.services import conversation_create
from tests.conftest import session_headers
from twinsite.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb", "checkpoint_pool")]
ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


async def connect(conversation_id, owner=True) -> WebsocketCommunicator:
    headers = await session_headers(conversation_id) if owner else ORIGIN
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def receive_turn(communicator: WebsocketCommunicator) -> list[dict]:
    events = []
    while True:
        event = json.loads(await communicator.receive_from(timeout=30))
        events.append(event)
        if event["type"] == "done" or (event["type"] == "error" and not event.get("in_turn")):
            return events


async def test_one_full_turn_streams_in_order_and_is_persisted():
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await connect(conversation.pk)
    try:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        events = await receive_turn(communicator)
    finally:
        await communicator.disconnect()
    kinds = [e["type"] for e in events]
    first_token, last_token = kinds.index("token"), len(kinds) - 1 - kinds[::-1].index("token")
    assert kinds[:2] == ["tool", "tool"]
    assert set(kinds[first_token:last_token + 1]) == {"token"} and last_token - first_token >= 10
    assert kinds[last_token + 1:] == ["citations", "done"]  # no diagnostics for visitors
    streamed = "".join(e["text"] for e in events if e["type"] == "token")
    done = events[-1]
    assert done["outcome"] == "answered" and done["answer"] == streamed
    assert "[source: " in streamed and done["citations"]

    @database_sync_to_async
    def persisted():
        messages = list(Message.objects.filter(conversation=conversation).values_list("role", flat=True))
        turn = TurnLog.objects.get(conversation=conversation)
        trace = AgentTrace.objects.get(turn=turn)
        return messages, turn, trace

    messages, turn, trace = await persisted()
    assert messages == ["user", "assistant"]
    assert turn.outcome == "answered" and turn.provider == "offline" and turn.latency_ms > 0
    assert turn.input_tokens > 0 and turn.output_tokens > 0
    assert trace.message_id == done["message_id"] and trace.tool_calls[0]["name"] == "search_knowledge"


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("not json", "bad_json"),
        (json.dumps(["ask"]), "bad_request"),
        (json.dumps({"type": "hello"}), "bad_request"),
        (json.dumps({"type": "ask", "text": "   "}), "empty_question"),
        (json.dumps({"type": "ask", "text": 42}), "empty_question"),
        (json.dumps({"type": "ask", "text": "x" * 5000}), "too_long"),
    ],
)
async def test_bad_frames_get_error_events_and_the_socket_stays_usable(frame, code):
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await connect(conversation.pk)
    try:
        await communicator.send_to(text_data=frame)
        event = json.loads(await communicator.receive_from(timeout=10))
        assert event["type"] == "error" and event["code"] == code and event["in_turn"] is False
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "Waar woont ze?"}))
        events = await receive_turn(communicator)
        assert events[-1]["type"] == "done"
    finally:
        await communicator.disconnect()


async def test_a_second_question_while_answering_is_busy():
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await connect(conversation.pk)
    try:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "And then?"}))
        events = await receive_turn(communicator)
        busy = [e for e in events if e["type"] == "error"]
        if not busy:  # the busy answer may come after done when the turn is very fast
            busy = await receive_turn(communicator)
        assert any(e.get("code") == "busy" for e in busy)
    finally:
        await communicator.disconnect()


@pytest.mark.parametrize("conversation_id", [pytest.param(str(uuid.uuid4()), id="unknown-uuid"), "not-a-uuid", "a.b"])
async def test_unknown_or_malformed_conversation_gets_an_error_not_a_crash(conversation_id):
    communicator = await connect(conversation_id)
    try:
        event = json.loads(await communicator.receive_from(timeout=10))
        assert event["code"] == "unknown_conversation"
        assert (await communicator.receive_output(timeout=5))["type"] == "websocket.close"
    finally:
        await communicator.disconnect()


async def test_turn_limit_per_conversation(settings):
    settings.TWIN_MAX_TURNS = 1
    conversation = await database_sync_to_async(conversation_create)()
    communicator = await connect(conversation.pk)
    try:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        assert (await receive_turn(communicator))[-1]["type"] == "done"
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "More?"}))
        event = (await receive_turn(communicator))[-1]
        assert event["type"] == "error" and event["code"] == "turn_limit"
    finally:
        await communicator.disconnect()


async def test_two_sockets_on_one_conversation_do_not_run_turns_at_once():
    conversation = await database_sync_to_async(conversation_create)()
    first, second = await connect(conversation.pk), await connect(conversation.pk)
    try:
        await first.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        await first.receive_from(timeout=30)  # the turn has started
        await second.send_to(text_data=json.dumps({"type": "ask", "text": "And her articles?"}))
        rejected = json.loads(await second.receive_from(timeout=30))
        assert rejected["type"] == "error" and rejected["code"] == "busy"
        assert (await receive_turn(first))[-1]["type"] == "done"
    finally:
        await first.disconnect()
        await second.disconnect()
    turns = await database_sync_to_async(TurnLog.objects.filter(conversation=conversation).count)()
    assert turns == 1


async def test_staff_sockets_with_the_trace_permission_get_the_turns_diagnostics():
    from django.contrib.auth.models import Permission, User
    from django.test import Client

    from chat.turns.admission import SESSION_KEY

    conversation = await database_sync_to_async(conversation_create)()

    @database_sync_to_async
    def staff_session() -> str:
        client = Client()
        staffer = User.objects.create_user("staffer", password="pw-123456789", is_staff=True)
        staffer.user_permissions.add(Permission.objects.get(codename="view_trace"))
        client.force_login(staffer)
        session = client.session
        session[SESSION_KEY] = str(conversation.pk)
        session.save()
        return session.session_key

    key = await staff_session()
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation.pk}/",
                                         headers=[*ORIGIN, (b"cookie", f"sessionid={key}".encode())])
    connected, _ = await communicator.connect()
    assert connected
    try:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        events = await receive_turn(communicator)
    finally:
        await communicator.disconnect()
    trace = next(e for e in events if e["type"] == "trace")
    assert trace["provider"] == "offline" and "node_latency_ms" in trace


async def test_an_unknown_websocket_path_is_refused_cleanly():
    communicator = WebsocketCommunicator(application, "/ws/nothing/here/", headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert not connected


async def test_a_reconnecting_page_gets_what_it_missed_and_nothing_twice():
    conversation = await database_sync_to_async(conversation_create)()
    first = await connect(conversation.pk)
    try:
        await first.send_to(text_data=json.dumps({"type": "ask", "text": "What has she built?"}))
        done = (await receive_turn(first))[-1]
    finally:
        await first.disconnect()  # the page lost its socket; the answer was stored all the same
    second = await connect(conversation.pk)
    try:
        await second.send_to(text_data=json.dumps({"type": "sync", "after": 0}))
        history = json.loads(await second.receive_from(timeout=10))
        assert history["type"] == "history" and history["running"] is False
        assert [m["message_id"] for m in history["messages"]] == [done["message_id"]]
        assert history["messages"][0]["answer"] == done["answer"]
        assert history["messages"][0]["outcome"] == "answered" and history["messages"][0]["citations"]
        await second.send_to(text_data=json.dumps({"type": "sync", "after": done["message_id"]}))
        assert json.loads(await second.receive_from(timeout=10))["messages"] == []  # nothing twice
        for bad in ("1", -1, True, [1]):
            await second.send_to(text_data=json.dumps({"type": "sync", "after": bad}))
            assert json.loads(await second.receive_from(timeout=10))["code"] == "bad_request"
    finally:
        await second.disconnect()


async def test_errors_and_refusals_follow_the_page_language():
    conversation = await database_sync_to_async(conversation_create)()
    headers = [*await session_headers(conversation.pk), (b"accept-language", b"nl-NL,nl;q=0.9")]
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation.pk}/", headers=headers)
    assert (await communicator.connect())[0]
    try:
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": " "}))
        event = json.loads(await communicator.receive_from(timeout=10))
        assert event["code"] == "empty_question" and event["message"] == "Typ eerst een vraag."
        # a question whose words don't tell the language is answered in the page's language
        await communicator.send_to(text_data=json.dumps({"type": "ask", "text": "4111 1111 1111 1111"}))
        events = await receive_turn(communicator)
        assert events[-1]["outcome"] == "refused" and events[-1]["refusal"] == "card_number"
        assert events[-1]["answer"].startswith("Deel hier alsjeblieft geen kaartnummers")
    finally:
        await communicator.disconnect()

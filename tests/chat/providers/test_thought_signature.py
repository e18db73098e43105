"""Gemini 3's thought signatures: kept with the tool call they came with and sent back exactly.

Gemini's OpenAI-compatible stream puts the signature in ``extra_content.google.thought_signature``
of a tool call (only on the first call of a parallel step) and rejects the turn's next request
with a 400 when it is missing or altered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chat.providers.base import ChatRequest, ToolCall
from chat.providers.openai_compat import SKIP_SIGNATURE, OpenAICompatibleProvider
from chat.providers.sse import SSEDecoder, StreamAccumulator
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "sse" / "gemini3_thought_signature.txt"
SIGNATURE = json.loads(FIXTURE.read_text().splitlines()[0].removeprefix("data: "))[
    "choices"][0]["delta"]["tool_calls"][0]["extra_content"]["google"]["thought_signature"]


def parse(body: str, split: int | None):
    pieces = [body] if split is None else [body[i:i + split] for i in range(0, len(body), split)]
    decoder, acc = SSEDecoder(), StreamAccumulator()
    for piece in pieces:
        for payload in decoder.feed(piece):
            acc.add(payload)
    for payload in decoder.flush():
        acc.add(payload)
    return acc.result()


@pytest.mark.parametrize("split", [None, 1, 13, 200])
def test_the_signature_stays_with_its_call_wherever_the_stream_is_split(split):
    result = parse(FIXTURE.read_text(), split)
    first, second = result.tool_calls
    assert (first.name, first.arguments) == ("search_knowledge", '{"query":"Ledgerline GitHub stars"}')
    assert first.extra_content == {"google": {"thought_signature": SIGNATURE}}
    assert second.name == "check_availability" and second.extra_content is None  # Gemini signs the first only
    assert first.as_message()["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert "extra_content" not in second.as_message()
    assert (result.usage.input_tokens, result.usage.cached_tokens) == (2310, 2048)


def test_extra_content_spread_over_deltas_is_merged():
    acc = StreamAccumulator()
    acc.add(json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "search_knowledge", "arguments": "{}"},
         "extra_content": {"google": {"thought_signature": "abc"}}}]}}]}))
    acc.add(json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "extra_content": {"google": {"other": 1}, "vendor": "x"}}]}, "finish_reason": "tool_calls"}]}))
    assert acc.result().tool_calls[0].extra_content == {"google": {"thought_signature": "abc", "other": 1},
                                                        "vendor": "x"}


def gemini(server: FakeOpenAI, name: str = "gemini") -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(name=name, model="gemini-3-flash-preview", base_url=server.base_url,
                                    api_key="test-key-0000", max_attempts=1, backoff=0.0, timeout=5.0)


async def test_the_next_request_echoes_the_signature_exactly_over_http():
    with FakeOpenAI() as server:
        server.add(Reply(chunks=[FIXTURE.read_text()]))
        server.add(Reply(chunks=sse_text("About 1,900 stars. [source: Project: Ledgerline]")))
        provider = gemini(server)
        question = [{"role": "user", "content": "How popular is Ledgerline?"}]
        first = await provider.complete(ChatRequest(messages=question), lambda _: None)
        exchange = [{"role": "assistant", "content": None, "tool_calls": [c.as_message() for c in first.tool_calls]}]
        exchange += [{"role": "tool", "tool_call_id": c.id, "content": "{}"} for c in first.tool_calls]
        await provider.complete(ChatRequest(messages=question + exchange), lambda _: None)
    sent = server.requests[1]["body"]["messages"][1]["tool_calls"]
    assert sent[0]["extra_content"] == {"google": {"thought_signature": SIGNATURE}}
    assert sent[0]["id"] == first.tool_calls[0].id
    assert "extra_content" not in sent[1]  # nothing invented for the unsigned parallel call


def test_a_step_the_graph_wrote_gets_the_skip_placeholder_for_gemini_only():
    injected = ToolCall(id="exec_1", name="draft_contact_message", arguments="{}").as_message()
    signed = ToolCall(id="c1", name="search_knowledge", arguments="{}",
                      extra_content={"google": {"thought_signature": "sig"}}).as_message()
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [signed]},
                {"role": "assistant", "content": None, "tool_calls": [injected]}]
    with FakeOpenAI() as server:
        body = gemini(server).payload(ChatRequest(messages=messages))
        plain = gemini(server, name="openai").payload(ChatRequest(messages=messages))
    assert body["messages"][1]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "sig"}}
    assert body["messages"][2]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": SKIP_SIGNATURE}}
    assert "extra_content" not in plain["messages"][2]["tool_calls"][0]
    assert "extra_content" not in messages[2]["tool_calls"][0]  # the caller's messages are not changed

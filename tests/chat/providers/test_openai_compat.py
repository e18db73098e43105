"""The provider client against a real HTTP server on loopback (no mocks of httpx)."""

from __future__ import annotations

import json
import socket

import pytest

from chat.providers.base import ChatRequest, ProviderError
from chat.providers.faults import FaultInjectingTransport
from chat.providers.openai_compat import OpenAICompatibleProvider
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text

REQUEST = ChatRequest(messages=[{"role": "user", "content": "hi"}], tools=[{
    "type": "function",
    "function": {"name": "search_knowledge", "description": "d", "strict": True,
                 "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}},
}])


def provider(server: FakeOpenAI | None = None, **kwargs) -> OpenAICompatibleProvider:
    options = {"name": "openai", "model": "gpt-test", "api_key": "sk-test-key-000000000000",
               "base_url": server.base_url if server else "http://127.0.0.1:9/v1",
               "max_attempts": 3, "backoff": 0.0, "timeout": 5.0} | kwargs
    return OpenAICompatibleProvider(**options)


async def collect(p: OpenAICompatibleProvider, request: ChatRequest = REQUEST):
    tokens: list[str] = []
    result = await p.complete(request, tokens.append)
    return result, tokens


async def test_streams_tokens_and_sends_a_strict_request():
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("Hello", " there", usage={"prompt_tokens": 42, "completion_tokens": 2,
                                                                    "prompt_tokens_details": {"cached_tokens": 40}})))
        result, tokens = await collect(provider(server))
    assert tokens == ["Hello", " there"] and result.text == "Hello there"
    assert (result.usage.input_tokens, result.usage.cached_tokens, result.usage.output_tokens) == (42, 40, 2)
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["authorization"] == "Bearer sk-test-key-000000000000"
    assert sent["body"]["stream"] is True and sent["body"]["stream_options"] == {"include_usage": True}
    assert sent["body"]["tools"][0]["function"]["strict"] is True


async def test_strict_flag_is_dropped_for_providers_without_it():
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("ok")))
        await collect(provider(server, name="gemini"))
    assert "strict" not in server.requests[0]["body"]["tools"][0]["function"]


@pytest.mark.parametrize(("setting", "sent"), [(None, None), ("", "")])
async def test_a_step_that_only_called_tools_is_sent_with_null_content_unless_configured(setting, sent):
    """null by default (the API's form; Gemini and Ollama refuse ""), "" where configured
    (llama-cpp-python's server answers 500 to null); the caller's list is left untouched."""
    call = {"id": "c1", "type": "function", "function": {"name": "search_knowledge", "arguments": "{}"}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "{}"},
                {"role": "assistant", "content": "Searching.", "tool_calls": [call]}]
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("ok")))
        await collect(provider(server, tool_step_content=setting), ChatRequest(messages=messages, tools=REQUEST.tools))
    sent_messages = server.requests[0]["body"]["messages"]
    assert sent_messages[1] == {"role": "assistant", "content": sent, "tool_calls": [call]}
    assert sent_messages[3]["content"] == "Searching." and messages[1]["content"] is None


async def test_retries_5xx_and_429_before_any_token():
    with FakeOpenAI() as server:
        server.add(Reply(500, [json.dumps({"error": {"message": "boom", "type": "server_error"}})]))
        server.add(Reply(429, [json.dumps([{"error": {"code": 429, "message": "slow down",
                                                      "status": "RESOURCE_EXHAUSTED"}}])],
                         headers={"Retry-After": "0"}))
        server.add(Reply(chunks=sse_text("fine")))
        result, tokens = await collect(provider(server))
    assert tokens == ["fine"] and result.attempts == 3 and len(server.requests) == 3


async def test_gives_up_after_max_attempts_with_the_providers_message():
    with FakeOpenAI() as server:
        for _ in range(3):
            server.add(Reply(503, [json.dumps({"error": {"message": "overloaded", "type": "server_error"}})]))
        with pytest.raises(ProviderError) as excinfo:
            await collect(provider(server))
    assert len(server.requests) == 3
    assert (excinfo.value.status, excinfo.value.message, excinfo.value.forwarded) == (503, "overloaded", False)


async def test_client_errors_are_not_retried():
    with FakeOpenAI() as server:
        body = {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}
        server.add(Reply(401, [json.dumps(body)]))
        with pytest.raises(ProviderError) as excinfo:
            await collect(provider(server))
    assert len(server.requests) == 1 and excinfo.value.code == "invalid_request_error"


async def test_connection_refused_is_retried_then_typed():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError) as excinfo:
        await collect(provider(base_url=f"http://127.0.0.1:{port}/v1"))
    assert excinfo.value.code == "connection" and not excinfo.value.forwarded


async def test_cut_after_tokens_aborts_without_restarting():
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("The answer", " starts", " here"), cut_after=3))
        server.add(Reply(chunks=sse_text("must never be requested")))
        with pytest.raises(ProviderError) as excinfo:
            await collect(provider(server))
    assert excinfo.value.forwarded is True
    assert excinfo.value.partial.text == "The answer starts"
    assert len(server.requests) == 1  # never restarted: the visitor saw tokens


async def test_cut_before_any_token_is_retried():
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("late"), cut_after=1))  # only the role chunk got through
        server.add(Reply(chunks=sse_text("second try")))
        _, tokens = await collect(provider(server))
    assert tokens == ["second try"] and len(server.requests) == 2


async def test_fault_injection_drops_every_second_request_and_retries_absorb_it():
    FaultInjectingTransport.reset()
    with FakeOpenAI() as server:
        for _ in range(3):
            server.add(Reply(chunks=sse_text("ok")))
        p = provider(server, drop_every=2)
        results = [await collect(p) for _ in range(3)]
    assert [r.text for r, _ in results] == ["ok", "ok", "ok"]
    assert [r.attempts for r, _ in results] == [1, 2, 2]  # requests 2 and 4 were dropped
    assert len(server.requests) == 3


async def test_fault_injection_cuts_streams_mid_way():
    FaultInjectingTransport.reset()
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("one", " two", " three", " four")))
        with pytest.raises(ProviderError) as excinfo:
            await collect(provider(server, cut_stream=True))
    assert excinfo.value.forwarded and excinfo.value.partial.text


def test_backoff_honours_retry_after_and_is_bounded():
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from chat.providers.openai_compat import _retry_after

    p = provider(backoff=0.5)
    assert p._delay(1, 2.5) == 2.5
    assert p._delay(1, 999) == 30.0
    assert 0.25 <= p._delay(1, None) <= 0.75 and 1.0 <= p._delay(3, None) <= 3.0
    assert _retry_after("7") == 7.0 and _retry_after("soon") is None and _retry_after(None) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    assert 15 <= _retry_after(later) <= 20


async def test_call_arguments_that_are_no_json_object_are_sent_back_as_an_empty_object():
    """A weak model's arguments that are no JSON ('{"message": "dre_m_f_v') go back in the history
    as {} (llama-server parses them for its chat template and answers 500 to every retry); valid
    ones go back as they came, and the caller's list is left untouched."""
    broken = {"id": "c1", "type": "function", "function": {"name": "draft", "arguments": '{"message": "dre_m_f_v'}}
    listed = {"id": "c2", "type": "function", "function": {"name": "draft", "arguments": "[1, 2]"}}
    valid = {"id": "c3", "type": "function", "function": {"name": "search_knowledge", "arguments": '{"query": "x"}'}}
    messages = [{"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [broken, listed, valid]},
                *({"role": "tool", "tool_call_id": c, "content": "invalid"} for c in ("c1", "c2", "c3"))]
    with FakeOpenAI() as server:
        server.add(Reply(chunks=sse_text("ok")))
        await collect(provider(server), ChatRequest(messages=messages, tools=REQUEST.tools))
    sent = server.requests[0]["body"]["messages"][1]["tool_calls"]
    assert [c["function"]["arguments"] for c in sent] == ["{}", "{}", '{"query": "x"}']
    assert [c["id"] for c in sent] == ["c1", "c2", "c3"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"message": "dre_m_f_v'

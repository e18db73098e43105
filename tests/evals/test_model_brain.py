"""The fake Gemini the eval runs over HTTP is strict where Gemini 3 is: a run that passes through
it proves the client sends thought signatures back. Checked here against the real client."""

from __future__ import annotations

import copy
import json

import pytest

from chat.agent.tools import tool_schemas
from chat.providers.base import ChatRequest, ProviderError
from chat.providers.openai_compat import OpenAICompatibleProvider
from tests.fakes.model_brain import INVENTED_SOURCE, OfflineBrain
from tests.fakes.openai_server import FakeOpenAI

QUESTION = [{"role": "system", "content": "You are a twin."}, {"role": "user", "content": "What is Ledgerline?"}]


def gemini(server: FakeOpenAI, name: str = "gemini") -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(name=name, model="gemini-3-flash-preview", base_url=server.base_url,
                                    api_key="test-key-0000", max_attempts=3, backoff=0.0, timeout=10.0)


def followed_by(step: list[dict]) -> list[dict]:
    result = {"results": [{"title": "Project: Ledgerline", "heading": "What it does", "url": "/projects/ledgerline/",
                           "text": "Ledgerline is an open-source double-entry bookkeeping library for Django."}]}
    calls = step[0]["tool_calls"]
    return QUESTION + step + [{"role": "tool", "tool_call_id": calls[0]["id"], "content": json.dumps(result)}]


async def test_signed_tool_call_then_a_cited_answer_with_an_invented_source():
    brain = OfflineBrain()
    with FakeOpenAI(brain=brain) as server:
        provider = gemini(server)
        first = await provider.complete(ChatRequest(messages=QUESTION, tools=tool_schemas()), lambda _: None)
        step = [{"role": "assistant", "content": None, "tool_calls": [c.as_message() for c in first.tool_calls]}]
        tokens: list[str] = []
        second = await provider.complete(ChatRequest(messages=followed_by(step), tools=tool_schemas()), tokens.append)
    call = first.tool_calls[0]
    assert call.name == "search_knowledge" and call.extra_content["google"]["thought_signature"]
    assert "".join(tokens) == second.text and "[source: Project: Ledgerline]" in second.text
    assert second.text.endswith(f"[source: {INVENTED_SOURCE}]")
    assert (brain.signatures_issued, brain.signatures_checked, brain.rejected) == (1, 1, [])
    assert not first.raw[-1].rstrip().endswith("[DONE]")  # Gemini's dialect: no [DONE]
    assert second.usage.input_tokens > second.usage.cached_tokens > 0


@pytest.mark.parametrize("tamper", ["drop", "alter"])
async def test_a_step_sent_back_without_its_signature_is_a_400_like_gemini(tamper):
    """Dropped: through a provider without Gemini's placeholder handling (an OpenAI-compatible
    gateway in front of Gemini), the request goes as the caller built it. Altered: always."""
    brain = OfflineBrain()
    with FakeOpenAI(brain=brain) as server:
        provider = gemini(server, name="openai_compatible" if tamper == "drop" else "gemini")
        first = await provider.complete(ChatRequest(messages=QUESTION, tools=tool_schemas()), lambda _: None)
        message = copy.deepcopy(first.tool_calls[0].as_message())
        if tamper == "drop":
            del message["extra_content"]
        else:
            signature = message["extra_content"]["google"]["thought_signature"]
            message["extra_content"]["google"]["thought_signature"] = "AAAA" + signature[4:]
        step = [{"role": "assistant", "content": None, "tool_calls": [message]}]
        with pytest.raises(ProviderError) as excinfo:
            await provider.complete(ChatRequest(messages=followed_by(step), tools=tool_schemas()), lambda _: None)
    assert (excinfo.value.status, excinfo.value.code) == (400, "invalid_argument")
    assert "thought" in excinfo.value.message and "signature" in excinfo.value.message
    assert len(server.requests) == 2 and len(brain.rejected) == 1  # a 400 is not retried


async def test_the_placeholder_passes_for_a_step_the_graph_wrote_and_is_counted():
    brain = OfflineBrain()
    with FakeOpenAI(brain=brain) as server:
        step = [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "exec_1", "type": "function", "function": {"name": "search_knowledge",
                                                              "arguments": '{"query": "Ledgerline"}'}}]}]
        result = await gemini(server).complete(ChatRequest(messages=followed_by(step), tools=tool_schemas()),
                                               lambda _: None)
    assert result.text and server.requests[0]["body"]["messages"][2]["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": "skip_thought_signature_validator"}}
    assert (brain.placeholders, brain.signatures_checked, brain.rejected) == (1, 0, [])

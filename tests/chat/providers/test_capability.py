"""``manage.py check_provider`` against real HTTP on loopback: a capable server, and one that
streams no usage and writes its tool call as text (as llama.cpp with a mismatched template)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text

pytestmark = pytest.mark.django_db


def _tool_stream(usage: bool = True) -> list[str]:
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "lookup", "arguments": '{"query": "rate"}'}}
    chunks = ["data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}) + "\n\n",
              "data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}) + "\n\n"]
    if usage:
        chunks.append("data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 5}})
                      + "\n\n")
    return [*chunks, "data: [DONE]\n\n"]


def _run(settings, server, capsys) -> dict:
    settings.TWIN_PROVIDER, settings.TWIN_BASE_URL = "openai_compatible", server.base_url
    settings.TWIN_MODEL, settings.TWIN_API_KEY, settings.TWIN_PROVIDER_MAX_ATTEMPTS = "local-1", "", 1
    call_command("check_provider", "--json")
    return json.loads(capsys.readouterr().out)


def test_a_capable_server_passes(settings, capsys):
    with FakeOpenAI(lambda body: Reply(chunks=_tool_stream() if body.get("tools") else sse_text("Hello", "!"))) as s:
        found = _run(settings, s, capsys)
    assert found["streams_text"] and found["streams_tool_calls"] and found["reports_usage"] and found["no_markup"]
    assert found["fixes"] == {} and found["errors"] == []


def test_a_server_without_usage_or_tool_calls_is_told_what_to_fix(settings, capsys):
    def brain(body):
        chunks = sse_text('<tool_call>{"name": "lookup"}</tool_call>') if body.get("tools") else sse_text("Hi")
        return Reply(chunks=[c for c in chunks if '"usage"' not in c])

    with FakeOpenAI(brain) as server, pytest.raises(CommandError):
        _run(settings, server, capsys)
    found = json.loads(capsys.readouterr().out)
    assert found["streams_text"] and not found["streams_tool_calls"] and not found["reports_usage"]
    assert not found["no_markup"] and "--jinja" in found["fixes"]["streams_tool_calls"]
    assert "estimate" in found["fixes"]["reports_usage"]


def test_offline_has_nothing_to_check(settings, capsys):
    settings.TWIN_PROVIDER = "offline"
    call_command("check_provider")
    assert "no model server" in capsys.readouterr().out

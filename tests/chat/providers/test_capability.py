"""``manage.py check_provider`` against real HTTP on loopback: a capable server, and one that
streams no usage and writes its tool call as text (as llama.cpp with a mismatched template)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from ops.health import health_report
from ops.models import ProviderCheck
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


def test_a_capable_server_passes_and_staff_see_the_result_in_health(settings, capsys, kb):
    with FakeOpenAI(lambda body: Reply(chunks=_tool_stream() if body.get("tools") else sse_text("Hello", "!"))) as s:
        found = _run(settings, s, capsys)
        prompts = [r["body"]["messages"][0]["content"] for r in s.requests]
    assert found["streams_text"] and found["streams_tool_calls"] and found["reports_usage"] and found["no_markup"]
    assert found["fits_prompt"] and found["fixes"] == {} and found["errors"] == []
    assert any("[source:" in p and len(p) > 5000 for p in prompts)  # the twin's own prompt, knowledge and all
    settings.TWIN_METRICS_TOKEN = "monitor-token-" + "m" * 20
    report = Client().get("/api/health", HTTP_AUTHORIZATION=f"Bearer {settings.TWIN_METRICS_TOKEN}").json()
    assert report["provider_check"]["ok"] and report["provider_check"]["fits_prompt"]
    assert report["provider_check"]["fixes"] == {} and report["provider_check"]["checked_at"]
    assert "provider_check" not in Client().get("/api/health").json()  # anonymous: the status only
    assert ProviderCheck.objects.get().model == "local-1"


def test_a_server_with_too_small_a_context_is_told_to_grow_it(settings, capsys, kb):
    too_long = '{"error": {"message": "the request exceeds the available context size, try increasing it"}}'

    def brain(body):
        if len(body["messages"][0]["content"]) > 2000:
            return Reply(400, [too_long])
        return Reply(chunks=_tool_stream() if body.get("tools") else sse_text("Hello"))

    with FakeOpenAI(brain) as server, pytest.raises(CommandError):
        _run(settings, server, capsys)
    found = json.loads(capsys.readouterr().out)
    assert found["streams_text"] and found["streams_tool_calls"] and found["fits_prompt"] is False
    assert "-c 8192" in found["fixes"]["fits_prompt"] and "context size" in found["errors"][0]
    assert health_report()["provider_check"]["ok"] is False


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

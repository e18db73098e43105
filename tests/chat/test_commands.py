from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import pytest
from django.core.management import call_command

from chat.models import AgentTrace, TurnLog
from evals.models import EvalRun

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db(transaction=True)
def test_ask_prints_the_streamed_answer_and_records_the_turn(kb, capsys):
    call_command("ask", "Welke opleiding heeft ze gedaan?")
    out = capsys.readouterr().out
    assert "TU Delft" in out and "[source: Over Mira (Nederlands)]" in out and "[answered]" in out
    assert TurnLog.objects.count() == 1 and AgentTrace.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_ask_ends_the_answer_s_line_before_the_turn_is_logged(kb, capsys):
    # the turn's log line goes to stderr: in a terminal, the same screen as the answer
    printed_before_log: list[str] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            printed_before_log.append(capsys.readouterr().out)

    handler = Seen()
    logging.getLogger("twinsite.turns").addHandler(handler)
    try:
        call_command("ask", "What has she built?")
    finally:
        logging.getLogger("twinsite.turns").removeHandler(handler)
    (printed,) = printed_before_log
    assert "[source:" in printed and printed.endswith("\n")


@pytest.mark.django_db(transaction=True)
def test_ask_embeds_the_vocabulary_as_a_serving_process_does(kb, capsys, monkeypatch):
    # else its one search finds the vocabulary not yet embedded and goes without translations
    from knowledge import translation

    monkeypatch.setattr(translation, "_vocabularies", OrderedDict())
    ready_at_search: list[bool] = []
    original = translation.translations

    def spied(*args, **kwargs):
        ready_at_search.append(bool(translation._vocabularies))
        return original(*args, **kwargs)

    monkeypatch.setattr(translation, "translations", spied)
    call_command("ask", "What has she built?")
    assert ready_at_search and all(ready_at_search)


@pytest.mark.django_db(transaction=True)
def test_ask_answers_when_the_vocabulary_cannot_be_embedded(kb, capsys, monkeypatch, caplog):
    # the translations only widen the search: a failing word model costs them, not the turn
    from chat.management.commands import ask

    def broken() -> int:
        raise RuntimeError("the word model failed to load")

    monkeypatch.setattr(ask, "warm_vocabulary", broken)
    with caplog.at_level(logging.WARNING, logger=ask.__name__):
        call_command("ask", "Welke opleiding heeft ze gedaan?")
    assert "TU Delft" in capsys.readouterr().out
    assert any("vocabulary was not embedded" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db(transaction=True)
def test_ask_json_prints_every_event(kb, capsys):
    call_command("ask", "Is she available for freelance work?", "--json")
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["type"] for e in events[:2]] == ["tool", "tool"] and events[0]["name"] == "check_availability"
    assert events[-1]["type"] == "done" and events[-1]["outcome"] == "answered"


@pytest.mark.django_db
def test_eval_retrieval_meets_the_targets(kb, capsys):
    call_command("eval_retrieval")
    out = capsys.readouterr().out
    assert "PASS" in out
    run = EvalRun.objects.get(suite="retrieval")
    assert run.passed and run.cases.count() >= 40
    assert run.metrics["hybrid"]["all"]["recall@3"] >= 0.90 and run.metrics["hybrid"]["nl"]["recall@3"] >= 0.85


def test_pgserver_status_command():
    result = subprocess.run([sys.executable, "-m", "twinsite.pgserver", "status"], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith(("running", "stopped"))
    usage = subprocess.run([sys.executable, "-m", "twinsite.pgserver", "nonsense"], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    assert usage.returncode == 2 and "usage" in usage.stderr


@pytest.mark.django_db
def test_purge_traces_deletes_only_old_traces(capsys):
    import datetime as dt

    from django.utils import timezone

    from chat.models import Conversation, Message, PromptSnapshot

    conversation = Conversation.objects.create()
    prompt = PromptSnapshot.objects.create(sha256="a" * 64, text="old prompt")
    for age in (100, 10):
        message = Message.objects.create(conversation=conversation, role="assistant", content=f"{age}")
        trace = AgentTrace.objects.create(message=message, system_prompt=prompt)
        AgentTrace.objects.filter(pk=trace.pk).update(created_at=timezone.now() - dt.timedelta(days=age))
    call_command("purge_traces", "--dry-run")
    assert "would delete 1" in capsys.readouterr().out and AgentTrace.objects.count() == 2
    call_command("purge_traces")
    assert list(AgentTrace.objects.values_list("message__content", flat=True)) == ["10"]
    assert Message.objects.count() == 2 and PromptSnapshot.objects.count() == 1
    call_command("purge_traces", "--days", "5")
    assert AgentTrace.objects.count() == 0 and PromptSnapshot.objects.count() == 0

"""Stored runs: the difference against the previous run of the same suite and provider, and the
admin (runs with filters, a run's cases with their traces, a chart of scores per suite)."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.utils import timezone

from chat.models import AgentTrace, Conversation, Message
from evals.models import EvalRun
from evals.selectors import run_diff, score_series
from evals.services import CaseRecord, RunRecord, eval_run_record

pytestmark = pytest.mark.django_db
T0 = timezone.now() - dt.timedelta(days=3)


def record(suite: str, provider: str, hours: int, results: dict[str, bool], trace_id: int | None = None) -> EvalRun:
    started = T0 + dt.timedelta(hours=hours)
    score = sum(results.values()) / len(results)
    run = RunRecord(suite=suite, started_at=started, finished_at=started + dt.timedelta(seconds=42), score=score,
                    threshold=0.9, passed=score >= 0.9, provider=provider, model="m", cost_usd=Decimal("0.0123"))
    return eval_run_record(run=run, commit="abc123def456-dirty", cases=[
        CaseRecord(case_id=c, question=f"question {c}", lang="en", expected={"summary": "answered"},
                   actual={"summary": "ok" if ok else "declined", "failures": [] if ok else ["outcome declined"]},
                   passed=ok, trace_id=trace_id)
        for c, ok in results.items()])


def test_the_diff_compares_with_the_previous_run_of_the_same_suite_and_provider():
    first = record("tasks", "offline", 0, {"a": True, "b": False, "c": True})
    record("tasks", "gemini", 1, {"a": False, "b": False, "c": False})  # another provider: not compared
    record("answers", "offline", 2, {"a": False})  # another suite: not compared
    latest = record("tasks", "offline", 3, {"a": False, "b": True, "c": True, "d": True})
    diff = run_diff(latest)
    assert diff.previous == first
    assert (diff.newly_failing, diff.newly_passing, diff.added, diff.removed) == (["a"], ["b"], ["d"], [])
    assert run_diff(first).previous is None
    assert latest.duration_s == 42.0 and latest.git_commit == "abc123def456-dirty"


def test_score_series_per_suite_oldest_first_optionally_per_provider():
    for hour, ok in enumerate([True, False, True]):
        record("tools", "offline", hour, {"x": ok})
    record("tools", "gemini", 5, {"x": True})
    series = score_series()
    assert [p.score for p in series["tools"]] == [1.0, 0.0, 1.0, 1.0]
    assert [p.provider for p in score_series(provider="gemini")["tools"]] == ["gemini"]


def test_admin_lists_runs_with_filters_and_a_server_rendered_chart_per_suite(admin_client):
    record("tools", "offline", 0, {"x": True, "y": True})
    record("tools", "offline", 1, {"x": True, "y": False})
    record("tasks", "gemini", 2, {"x": True})
    page = admin_client.get("/admin/evals/evalrun/").content.decode()
    charts = charts_of(page)
    assert charts.count("<svg") == 2 and 'aria-label="tools scores"' in charts and "<script" not in charts
    assert "threshold 0.90" in charts and "<polyline" in charts
    assert "?suite=tools" in page and "?provider=gemini" in page
    assert re.search(r"2 \(<a href=\"[^\"]*passed__exact=0\">1 failed</a>\)", page)
    filtered = charts_of(admin_client.get("/admin/evals/evalrun/?provider=gemini").content.decode())
    assert filtered.count("<svg") == 1 and 'aria-label="tasks scores"' in filtered


def charts_of(page: str) -> str:
    return page.split('id="eval-charts"')[1].split("</figure>", maxsplit=1)[0]


def test_a_runs_page_shows_its_cases_with_links_to_their_traces(admin_client):
    conversation = Conversation.objects.create()
    message = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, content="answer")
    trace = AgentTrace.objects.create(message=message)
    run = record("answers", "offline", 0, {"answers-en-cat": True, "answers-en-team": False}, trace_id=trace.pk)
    page = admin_client.get(f"/admin/evals/evalrun/{run.pk}/change/").content.decode()
    assert "answers-en-cat" in page and "answers-en-team" in page and "declined" in page
    assert f'/admin/chat/agenttrace/{trace.pk}/change/' in page
    cases = admin_client.get(f"/admin/evals/evalcase/?run__id__exact={run.pk}&passed__exact=0").content.decode()
    assert "answers-en-team" in cases and "answers-en-cat" not in cases
    trace.delete()  # a purged trace leaves the case without a link, not without its row
    assert run.cases.filter(trace__isnull=True).count() == 2

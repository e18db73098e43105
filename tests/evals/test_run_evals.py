"""``manage.py run_evals`` end to end: every suite through the real graph on the real Postgres,
once with the offline provider and once over HTTP through a fake Gemini on loopback with every
second request dropped; and a deliberately broken change that the suites must catch."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from chat.agent.nodes import verify as verify_node
from chat.models import TurnLog
from chat.providers.faults import FaultInjectingTransport
from evals.models import EvalCase, EvalRun
from knowledge import selectors as knowledge_selectors
from tests.fakes.model_brain import INVENTED_SOURCE, OfflineBrain
from tests.fakes.openai_server import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("kb")]
SUITES = {"tools", "tasks", "answers", "guards"}


def run_evals(capsys, *args: str) -> str:
    """The command's output; a run below a threshold fails the test with the command's table."""
    try:
        call_command("run_evals", *args)
    except CommandError as exc:
        pytest.fail(f"run_evals {' '.join(args)}: {exc}\n{capsys.readouterr().out}")
    return capsys.readouterr().out


def fake_gemini(settings, server: FakeOpenAI) -> None:
    """The configured provider is Gemini, reached at the fake server."""
    settings.TWIN_PROVIDER = "gemini"
    settings.TWIN_MODEL = "gemini-3-flash-preview"
    settings.TWIN_BASE_URL = server.base_url
    settings.TWIN_API_KEY = "test-gemini-key-0000"
    settings.TWIN_PROVIDER_BACKOFF = 0.01  # retries are exercised, not waited for
    settings.TWIN_PROVIDER_MAX_ATTEMPTS = 4
    settings.TWIN_DAILY_BUDGET_USD = Decimal("100")  # priced like Gemini; the budget is not under test here


def test_every_suite_with_the_offline_provider_meets_its_threshold(capsys):
    out = run_evals(capsys, "--provider", "offline")
    runs = {run.suite: run for run in EvalRun.objects.all()}
    assert set(runs) == SUITES
    for suite, run in runs.items():
        assert run.passed and run.score >= run.threshold, suite
        assert f"== {suite}:" in out and f"run {run.pk}" in out
    assert {runs[s].provider for s in ("tools", "tasks", "answers")} == {"offline"}
    # every graph case ran as a turn of its own conversation, and links to that turn's trace
    graph_cases = EvalCase.objects.filter(run__suite__in=["tools", "tasks", "answers"])
    assert graph_cases.count() >= 90 and not graph_cases.filter(trace__isnull=True).exists()
    assert len(set(graph_cases.values_list("trace__message__conversation", flat=True))) == graph_cases.count()
    assert "first tools run against offline: nothing to compare" in out
    # the offline twin only quotes its sources: the claim check finds every cited sentence in its document
    from chat.models import TurnLog

    checked = TurnLog.objects.exclude(assistant_message__citations=[])
    assert checked.count() >= 40
    assert list(checked.filter(unsupported_claims__gt=0).values_list("trace__unsupported", flat=True)) == []
    assert list(checked.filter(doubtful_claims__gt=0).values_list("trace__unsupported", flat=True)) == []  # nor doubted


def test_a_fake_gemini_over_http_under_failure_injection_meets_every_threshold_and_catches_a_broken_change(
        settings, capsys, monkeypatch):
    """One test for two runs (the second compares itself with the first): the whole set through
    the fake server with every second request dropped, then the tasks suite again after a
    deliberately broken change."""
    brain = OfflineBrain()
    with FakeOpenAI(brain=brain) as server:
        fake_gemini(settings, server)
        run_evals(capsys, "--fault-drop-every", "2")
        attempted = next(FaultInjectingTransport._counter) - 1
        runs = {run.suite: run for run in EvalRun.objects.all()}
        assert set(runs) == SUITES and all(run.passed for run in runs.values())
        assert runs["tasks"].provider == "gemini" and runs["tasks"].config["fault_drop_every"] == 2
        # every second request was dropped before it left the process, and retries absorbed each one
        assert attempted > 100 and len(server.requests) == attempted - attempted // 2
        # the thought signatures went back exactly as issued (a lost one is a 400 and a failed turn)
        assert brain.signatures_issued > 50 and brain.signatures_checked >= brain.signatures_issued
        assert brain.rejected == [] and brain.placeholders == 0  # no case resumes an approval: none was lost
        # the sloppy model's invented source never reached a visitor
        assert brain.invented_citations > 30
        assert not EvalCase.objects.filter(actual__answer__contains=INVENTED_SOURCE).exists()
        assert TurnLog.objects.filter(unknown_citations__contains=[INVENTED_SOURCE]).count() == \
            brain.invented_citations
        assert runs["answers"].cost_usd > 0

        # The deliberately broken change: verify takes every cited title for a real document.
        monkeypatch.setattr(verify_node, "knowledge", TrustingKnowledge())
        with pytest.raises(CommandError, match="below threshold: tasks"):
            call_command("run_evals", "--suite", "tasks")
    out = capsys.readouterr().out
    good = runs["tasks"]
    broken = EvalRun.objects.filter(suite="tasks").exclude(pk=good.pk).get()
    assert not broken.passed and broken.score < broken.threshold
    passed_before = set(good.cases.filter(passed=True).values_list("case_id", flat=True))
    newly_failing = broken.cases.filter(passed=False, case_id__in=passed_before)
    assert newly_failing.filter(case_id="tasks-en-ledgerline-stars").exists() and newly_failing.count() >= 10
    for case in newly_failing:  # each for the reason the broken change introduced
        assert f"cites documents that do not exist: {INVENTED_SOURCE}" in case.actual["failures"], case.case_id
    assert f"since run {good.pk}" in out and "newly failing: tasks-" in out


class TrustingKnowledge:
    """The deliberately broken change: verify takes every cited title for a real document."""

    class Everything(dict):
        def __contains__(self, title) -> bool:
            return True

        def __missing__(self, title) -> str:
            return "/sources/unknown/"

    def __getattr__(self, name: str):
        return getattr(knowledge_selectors, name)

    def document_urls(self) -> dict[str, str]:
        return self.Everything(knowledge_selectors.document_urls())

"""Running the eval suites: one service for ``manage.py run_evals`` and the owner's job in the admin.

``suites_run`` loads the datasets, runs the graph suites through the real graph (one conversation
per case) and the guard suite through the screen, stores each run with its cases, and returns the
results with their stored runs; ``run_report`` shapes one run as text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from chat.providers import get_provider
from chat.providers.base import Provider
from chat.providers.faults import FaultInjectingTransport
from evals import datasets
from evals.datasets import DatasetError
from evals.models import EvalRun
from evals.runner import SuiteResult, run_graph_suites_sync, run_guard_suite
from evals.selectors import run_diff
from evals.services import CaseRecord, RunRecord, eval_run_record, git_commit
from knowledge.search import warm_vocabulary

WIDTHS = (30, 44, 52)  # case, expected, got
Progress = Callable[[str, int, int, str], None]  # suite, done, total, case id


class EvalsError(ValueError):
    """A run that cannot start: a bad dataset, an unknown provider, a bad option."""


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def suites_run(*, suite: str = "all", provider: str | None = None, fault_drop_every: int = 0,
               dataset: Path | None = None, progress: Progress | None = None,
               quiet: bool = True) -> list[tuple[SuiteResult, EvalRun]]:
    """Run ``suite`` (or ``all``) and store each suite's run; raises EvalsError before running
    when the options or a dataset are wrong. ``quiet``: the per-turn INFO logs are held back."""
    suites = list(datasets.SUITES) if suite == "all" else [suite]
    if dataset is not None and len(suites) != 1:
        raise EvalsError("--dataset needs a single --suite")
    if fault_drop_every < 0:
        raise EvalsError("--fault-drop-every must be 0 (off) or a positive number")
    try:
        loaded = [datasets.load(name, dataset) for name in suites]
    except DatasetError as exc:
        raise EvalsError(str(exc)) from exc
    progress = progress or (lambda *_: None)
    graph = [d for d in loaded if d.suite in datasets.GRAPH_SUITES]
    model = _provider(provider, fault_drop_every) if graph else None
    commit = git_commit()
    results: list[SuiteResult] = []
    if graph:
        warm_vocabulary()  # as a serving process does: every question searched with translations
        results += _graph_suites(graph, model, progress, quiet)
    results += [run_guard_suite(d, progress) for d in loaded if d.suite == "guards"]
    runs = []
    for result in results:
        uses_model = result.suite in datasets.GRAPH_SUITES
        runs.append((result, _record(result, model if uses_model else None,
                                     fault_drop_every if uses_model else 0, commit)))
    return runs


def _graph_suites(graph: list, model: Provider, progress: Progress, quiet: bool) -> list[SuiteResult]:
    # An INFO line per turn and per request would bury the table; -v 2 shows them.
    loggers = [logging.getLogger(name) for name in ("chat", "httpx")]
    levels = [logger.level for logger in loggers]
    if quiet:
        for logger in loggers:
            logger.setLevel(logging.WARNING)
    try:
        return run_graph_suites_sync(graph, model, progress)
    except DatasetError as exc:
        raise EvalsError(str(exc)) from exc
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _provider(name: str | None, drop_every: int) -> Provider:
    try:
        provider = get_provider(name)
    except ValueError as exc:
        raise EvalsError(str(exc)) from exc
    if drop_every:
        if provider.offline or not hasattr(provider, "with_faults"):
            raise EvalsError("--fault-drop-every drops HTTP requests; the offline provider makes none")
        FaultInjectingTransport.reset()  # "every Nth" counts from this run's first request
        provider = provider.with_faults(drop_every=drop_every)
    return provider


def _record(result: SuiteResult, provider: Provider | None, drop_every: int, commit: str) -> EvalRun:
    dataset = result.dataset
    try:
        shown_path = str(dataset.path.relative_to(settings.BASE_DIR))
    except ValueError:
        shown_path = str(dataset.path)
    config = {"dataset": shown_path, "sha256": dataset.sha256, "cases": len(dataset.cases)}
    if drop_every:
        config["fault_drop_every"] = drop_every
    run = RunRecord(
        suite=result.suite, started_at=result.started_at, finished_at=result.finished_at, score=result.score,
        threshold=dataset.threshold, passed=result.passed, provider=provider.name if provider else "",
        model=provider.model if provider else "", cost_usd=result.cost_usd, config=config,
        metrics=result.metrics(),
    )
    cases = []
    for r in result.results:
        case = r.case
        expected = case.model_dump(exclude={"id", "lang", "turn", "text"}) | {"summary": r.grade.expected}
        actual = {"summary": r.grade.got, "failures": r.grade.failures}
        if r.observation is not None:
            actual |= r.observation.as_dict()
        cases.append(CaseRecord(case_id=case.id, question=case.question, lang=case.lang, expected=expected,
                                actual=actual, passed=r.grade.passed,
                                trace_id=r.observation.trace_id if r.observation else None))
    return eval_run_record(run=run, cases=cases, commit=commit)


def run_report(result: SuiteResult, run: EvalRun) -> list[str]:
    """The run as the terminal and the owner's job page show it: one line per case, the failures,
    the score by language, and what changed since the previous run."""
    lines: list[str] = []
    dataset = result.dataset
    who = f"{run.provider}/{run.model}" if run.provider else "screening only"
    faults = f", every {run.config['fault_drop_every']}th request dropped" if run.config.get(
        "fault_drop_every") else ""
    lines.append(f"\n== {result.suite}: {len(result.results)} cases, threshold {dataset.threshold:.2f} "
                      f"({who}{faults})")
    header = ("case", "expected", "got")
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, WIDTHS, strict=True)) + "  pass")
    for r in result.results:
        cells = (r.case.id, r.grade.expected, r.grade.got)
        lines.append("  ".join(_cut(c, w).ljust(w) for c, w in zip(cells, WIDTHS, strict=True))
                          + ("  ok" if r.grade.passed else "  FAIL"))
    for r in result.results:
        if not r.grade.passed:
            answer = " ".join((r.observation.answer if r.observation else "").split())
            lines.append(f"  FAIL {r.case.id}: {'; '.join(r.grade.failures)}"
                              + (f" — answer: {_cut(answer, 160)!r}" if answer else ""))
    metrics = run.metrics
    langs = ", ".join(f"{k} {v:.3f}" for k, v in metrics["by_lang"].items())
    extra = ""
    if result.suite == "guards":
        extra = f"; detected {metrics['detected']}, false positives {metrics['false_positives']}"
    elif result.suite == "answers":
        extra = "".join(f"; {label} {metrics[key]}" for key, label in (("cross", "cross-lingual"),
                                                                        ("decline", "declines")) if key in metrics)
    if "unsupported" in metrics:
        extra += (f"; answers with an unsupported claim {metrics['unsupported']}, "
                  f"with a doubtful one {metrics.get('doubtful', 0)}")
    lines.append(
        f"{result.suite}: {result.passed_count}/{len(result.results)} = {result.score:.3f} "
        f"(threshold {dataset.threshold:.2f}) {'PASS' if result.passed else 'FAIL'}; by language: {langs}{extra}; "
        f"cost ${Decimal(run.cost_usd):.6f}; {run.duration_s:.1f} s; run {run.pk}"
    )
    diff = run_diff(run)
    if diff.previous is None:
        lines.append(f"  first {result.suite} run against {run.provider or 'the screen'}: nothing to compare")
        return lines
    lines.append(
        f"  since run {diff.previous.pk} ({timezone.localtime(diff.previous.started_at):%Y-%m-%d %H:%M}, score "
        f"{diff.previous.score or 0:.3f}): newly failing: {', '.join(diff.newly_failing) or 'none'}; "
        f"newly passing: {', '.join(diff.newly_passing) or 'none'}"
        + (f"; new cases: {len(diff.added)}" if diff.added else "")
        + (f"; cases gone: {len(diff.removed)}" if diff.removed else "")
    )
    return lines

"""Run the labelled suites against the real graph; exit non-zero below any threshold."""

from __future__ import annotations

import logging
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from chat.providers import get_provider
from chat.providers.base import Provider
from chat.providers.faults import FaultInjectingTransport
from evals import datasets
from evals.datasets import DatasetError
from evals.runner import SuiteResult, run_graph_suites_sync, run_guard_suite
from evals.selectors import run_diff
from evals.services import CaseRecord, RunRecord, eval_run_record, git_commit

WIDTHS = (30, 44, 52)  # case, expected, got


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Command(BaseCommand):
    help = ("Run the eval suites (tool selection, task completion, answer quality, guards) through the real "
            "graph, one new conversation per case; print each case and the score against each threshold, store "
            "the run, show what changed since the previous run; exit 1 below any threshold.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--suite", choices=[*datasets.SUITES, "all"], default="all")
        parser.add_argument("--provider", help="offline, or the configured TWIN_PROVIDER (the default)")
        parser.add_argument("--fault-drop-every", type=int, default=0, metavar="N",
                            help="drop every Nth provider HTTP request (retries must absorb it)")
        parser.add_argument("--dataset", type=Path, help="run this file instead of evals/data/<suite>.yaml "
                                                         "(one suite only)")

    def handle(self, *args, suite: str, provider: str | None, fault_drop_every: int, dataset: Path | None,
               **options) -> None:
        suites = list(datasets.SUITES) if suite == "all" else [suite]
        if dataset is not None and len(suites) != 1:
            raise CommandError("--dataset needs a single --suite")
        if fault_drop_every < 0:
            raise CommandError("--fault-drop-every must be 0 (off) or a positive number")
        try:
            loaded = [datasets.load(name, dataset) for name in suites]
        except DatasetError as exc:
            raise CommandError(str(exc)) from exc
        graph = [d for d in loaded if d.suite in datasets.GRAPH_SUITES]
        model = self._provider(provider, fault_drop_every) if graph else None
        commit = git_commit()
        self._progress_line = ""
        results: list[SuiteResult] = []
        if graph:
            # An INFO line per turn and per request would bury the table; -v 2 shows them.
            loggers = [logging.getLogger(name) for name in ("chat", "httpx")]
            levels = [logger.level for logger in loggers]
            if options["verbosity"] < 2:
                for logger in loggers:
                    logger.setLevel(logging.WARNING)
            try:
                results += run_graph_suites_sync(graph, model, self._progress)
            except DatasetError as exc:
                raise CommandError(str(exc)) from exc
            finally:
                for logger, level in zip(loggers, levels, strict=True):
                    logger.setLevel(level)
        results += [run_guard_suite(d, self._progress) for d in loaded if d.suite == "guards"]
        failed = []
        for result in results:
            uses_model = result.suite in datasets.GRAPH_SUITES
            run = self._record(result, model if uses_model else None, fault_drop_every if uses_model else 0, commit)
            self._report(result, run)
            if not result.passed:
                failed.append(result.suite)
        self.stdout.write("")
        self.stdout.write("  ".join(f"{r.suite} {r.score:.3f}/{r.dataset.threshold:.2f} "
                                    f"{'PASS' if r.passed else 'FAIL'}" for r in results))
        if failed:
            raise CommandError(f"below threshold: {', '.join(failed)}", returncode=1)

    def _provider(self, name: str | None, drop_every: int) -> Provider:
        try:
            provider = get_provider(name)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if drop_every:
            if provider.offline or not hasattr(provider, "with_faults"):
                raise CommandError("--fault-drop-every drops HTTP requests; the offline provider makes none")
            FaultInjectingTransport.reset()  # "every Nth" counts from this run's first request
            provider = provider.with_faults(drop_every=drop_every)
        return provider

    def _progress(self, suite: str, done: int, total: int, case_id: str) -> None:
        if not self.stderr.isatty():
            return
        width = 30
        filled = width * done // max(total, 1)
        line = f"\r{suite:<8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {case_id}"
        plain = str  # a progress bar, not an error: no colour
        self.stderr.write(line.ljust(len(self._progress_line)), ending="", style_func=plain)
        self._progress_line = line
        if done == total:
            self.stderr.write("", style_func=plain)
            self._progress_line = ""

    def _record(self, result: SuiteResult, provider: Provider | None, drop_every: int, commit: str):
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

    def _report(self, result: SuiteResult, run) -> None:
        dataset = result.dataset
        who = f"{run.provider}/{run.model}" if run.provider else "screening only"
        faults = f", every {run.config['fault_drop_every']}th request dropped" if run.config.get(
            "fault_drop_every") else ""
        self.stdout.write(f"\n== {result.suite}: {len(result.results)} cases, threshold {dataset.threshold:.2f} "
                          f"({who}{faults})")
        header = ("case", "expected", "got")
        self.stdout.write("  ".join(h.ljust(w) for h, w in zip(header, WIDTHS, strict=True)) + "  pass")
        for r in result.results:
            cells = (r.case.id, r.grade.expected, r.grade.got)
            self.stdout.write("  ".join(_cut(c, w).ljust(w) for c, w in zip(cells, WIDTHS, strict=True))
                              + ("  ok" if r.grade.passed else "  FAIL"))
        for r in result.results:
            if not r.grade.passed:
                answer = " ".join((r.observation.answer if r.observation else "").split())
                self.stdout.write(f"  FAIL {r.case.id}: {'; '.join(r.grade.failures)}"
                                  + (f" — answer: {_cut(answer, 160)!r}" if answer else ""))
        metrics = run.metrics
        langs = ", ".join(f"{k} {v:.3f}" for k, v in metrics["by_lang"].items())
        extra = ""
        if result.suite == "guards":
            extra = f"; detected {metrics['detected']}, false positives {metrics['false_positives']}"
        self.stdout.write(
            f"{result.suite}: {result.passed_count}/{len(result.results)} = {result.score:.3f} "
            f"(threshold {dataset.threshold:.2f}) {'PASS' if result.passed else 'FAIL'}; by language: {langs}{extra}; "
            f"cost ${Decimal(run.cost_usd):.6f}; {run.duration_s:.1f} s; run {run.pk}"
        )
        diff = run_diff(run)
        if diff.previous is None:
            self.stdout.write(f"  first {result.suite} run against {run.provider or 'the screen'}: nothing to compare")
            return
        self.stdout.write(
            f"  since run {diff.previous.pk} ({timezone.localtime(diff.previous.started_at):%Y-%m-%d %H:%M}, score "
            f"{diff.previous.score or 0:.3f}): newly failing: {', '.join(diff.newly_failing) or 'none'}; "
            f"newly passing: {', '.join(diff.newly_passing) or 'none'}"
            + (f"; new cases: {len(diff.added)}" if diff.added else "")
            + (f"; cases gone: {len(diff.removed)}" if diff.removed else "")
        )

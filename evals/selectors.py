"""Reads of the eval history: the run before this one, what changed since, scores over time."""

from __future__ import annotations

from dataclasses import dataclass, field

from evals.models import EvalRun


@dataclass
class RunDiff:
    previous: EvalRun | None
    newly_failing: list[str] = field(default_factory=list)
    newly_passing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # cases the previous run did not have
    removed: list[str] = field(default_factory=list)


def previous_run(run: EvalRun) -> EvalRun | None:
    """The latest earlier run of the same suite against the same provider."""
    return (EvalRun.objects.filter(suite=run.suite, provider=run.provider, started_at__lt=run.started_at)
            .exclude(pk=run.pk).order_by("-started_at", "-pk").first())


def run_diff(run: EvalRun) -> RunDiff:
    previous = previous_run(run)
    if previous is None:
        return RunDiff(previous=None)
    now = dict(run.cases.values_list("case_id", "passed"))
    before = dict(previous.cases.values_list("case_id", "passed"))
    return RunDiff(
        previous=previous,
        newly_failing=sorted(c for c, ok in now.items() if not ok and before.get(c) is True),
        newly_passing=sorted(c for c, ok in now.items() if ok and before.get(c) is False),
        added=sorted(set(now) - set(before)),
        removed=sorted(set(before) - set(now)),
    )


@dataclass(frozen=True)
class Point:
    run_id: int
    started_at: object
    provider: str
    score: float
    threshold: float | None
    passed: bool | None


def score_series(*, per_suite: int = 60, provider: str | None = None) -> dict[str, list[Point]]:
    """The latest ``per_suite`` scored runs of each suite, oldest first."""
    runs = EvalRun.objects.filter(score__isnull=False)
    if provider is not None:
        runs = runs.filter(provider=provider)
    series: dict[str, list[Point]] = {}
    for suite in sorted(set(runs.values_list("suite", flat=True))):
        rows = runs.filter(suite=suite).order_by("-started_at", "-pk").values_list(
            "pk", "started_at", "provider", "score", "threshold", "passed")[:per_suite]
        series[suite] = [Point(*row) for row in reversed(rows)]
    return series

"""Writes of the evals app: a run and its cases, stored in one transaction."""

from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import transaction

from evals.models import EvalCase, EvalRun


@dataclass
class CaseRecord:
    case_id: str
    question: str
    lang: str
    expected: dict
    actual: dict
    passed: bool
    trace_id: int | None = None


@dataclass
class RunRecord:
    suite: str
    started_at: dt.datetime
    finished_at: dt.datetime
    score: float
    threshold: float
    passed: bool
    provider: str = ""
    model: str = ""
    cost_usd: Decimal = Decimal("0")
    config: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)


def git_commit() -> str:
    """The checked-out commit, ``-dirty`` when tracked files differ from it; "" outside git."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=settings.BASE_DIR, capture_output=True, text=True,
                             timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=settings.BASE_DIR,
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{sha}-dirty" if dirty else sha


@transaction.atomic
def eval_run_record(*, run: RunRecord, cases: list[CaseRecord], commit: str | None = None) -> EvalRun:
    record = EvalRun.objects.create(
        suite=run.suite, provider=run.provider, model=run.model,
        git_commit=git_commit() if commit is None else commit,
        started_at=run.started_at, finished_at=run.finished_at,
        duration_s=round((run.finished_at - run.started_at).total_seconds(), 3),
        score=run.score, threshold=run.threshold, passed=run.passed, cost_usd=run.cost_usd,
        config=run.config, metrics=run.metrics,
    )
    EvalCase.objects.bulk_create([
        EvalCase(run=record, case_id=c.case_id, question=c.question, lang=c.lang, expected=c.expected,
                 actual=c.actual, passed=c.passed, trace_id=c.trace_id)
        for c in cases
    ])
    return record

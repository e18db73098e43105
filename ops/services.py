"""Long owner actions (knowledge sync, eval runs) through the task queue, with progress.

``job_start`` writes the Job row and its task in one transaction: django-tasks-db keeps tasks in
the same database, so the two commit together or not at all (no on_commit gap in which a crash
loses the task). The worker's task calls ``job_run``, which claims the job once (a replayed task
finds it started and does nothing), reports progress and records the outcome.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from django.db import IntegrityError, transaction
from django.tasks import Task
from django.utils import timezone

from guards.scrub import scrub_text
from ops.models import ACTIVE, Job, ProviderCheck

# A running job that reported nothing for this long lost its worker (killed, restarted): the
# next start of its kind marks it failed instead of waiting for it forever.
STALE_AFTER = dt.timedelta(minutes=15)
PROGRESS_EVERY = 0.5  # seconds between progress writes; the last step is always written
# The queue of owner actions: the worker runs it in its own thread, so a long sync or eval run
# never delays an approval's resume or an e-mail.
OWNER_QUEUE = "owner"

Progress = Callable[..., None]


class JobBusy(Exception):
    """A job of this kind is queued or running; ``job`` is that one."""

    def __init__(self, job: Job | None) -> None:
        super().__init__(f"{job} is still active" if job else "a job of this kind is active")
        self.job = job


@transaction.atomic
def job_start(*, kind: str, task: Task, requested_by: str = "", arguments: dict | None = None) -> Job:
    """Queue ``task(job_id)``; raises JobBusy while a job of the same kind is active."""
    jobs_fail_stale(kind=kind)
    try:
        with transaction.atomic():
            job = Job.objects.create(kind=kind, requested_by=requested_by[:150], arguments=arguments or {})
    except IntegrityError:  # job_one_active_per_kind: the other click won
        raise JobBusy(Job.objects.filter(kind=kind, status__in=ACTIVE).first()) from None
    result = task.enqueue(job.pk)  # same database, same transaction as the job row
    job.task_id = str(result.id)[:64]
    job.save(update_fields=["task_id"])
    return job


def jobs_fail_stale(*, kind: str | None = None, now: dt.datetime | None = None) -> int:
    """Mark running jobs whose worker went silent as failed (see STALE_AFTER)."""
    now = now or timezone.now()
    stale = Job.objects.filter(status=Job.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER)
    if kind is not None:
        stale = stale.filter(kind=kind)
    return stale.update(status=Job.Status.FAILED, finished_at=now,
                        error=f"no progress for {int(STALE_AFTER.total_seconds() // 60)} minutes: "
                              "its worker stopped or was restarted; start it again")


class _Reporter:
    """The ``progress(done, total, note="")`` callback handed to the work; throttled writes."""

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.last = 0.0

    def __call__(self, done: int, total: int, note: str = "") -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY and done < total:
            return
        self.last = now
        Job.objects.filter(pk=self.job_id, status=Job.Status.RUNNING).update(
            done=max(done, 0), total=max(total, 0), note=note[:200], heartbeat_at=timezone.now())


def job_run(*, job_id: int, work: Callable[[Progress], str]) -> str:
    """Run ``work(progress)`` for a queued job and record its outcome; a job that is not queued
    (a replayed task, a job already done) is left alone. The work's exceptions are recorded on
    the job and re-raised, so the task is marked failed as well."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status != Job.Status.QUEUED:
            return f"job {job_id} is {job.status if job else 'gone'}: nothing to do"
        now = timezone.now()
        Job.objects.filter(pk=job_id).update(status=Job.Status.RUNNING, started_at=now, heartbeat_at=now)
    try:
        result = work(_Reporter(job_id))
    except Exception as exc:
        _finish(job_id, Job.Status.FAILED, error=scrub_text(f"{type(exc).__name__}: {exc}"))
        raise
    _finish(job_id, Job.Status.SUCCEEDED, result=result)
    return result


def _finish(job_id: int, status: str, *, result: str = "", error: str = "") -> None:
    Job.objects.filter(pk=job_id).update(status=status, result=result[:100_000], error=error[:10_000],
                                         finished_at=timezone.now(), heartbeat_at=timezone.now())


def provider_check_record(*, provider: str, model: str, result: dict, ok: bool) -> None:
    """Keep the latest capability check of this provider and model (one row each)."""
    ProviderCheck.objects.update_or_create(provider=provider, model=model[:200],
                                           defaults={"ok": ok, "result": result, "checked_at": timezone.now()})

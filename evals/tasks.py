"""Eval runs as background jobs: started from the admin, run by ``manage.py twin_worker``.

The job runs ``manage.py run_evals`` itself (same suites, grading, history and diff), with its
progress going to the job instead of a terminal bar and its report kept as the job's result.
"""

from __future__ import annotations

import io

from django.core.management import CommandError, call_command
from django.tasks import task

from evals.management.commands import run_evals
from ops.services import OWNER_QUEUE, Progress, job_run


class _JobCommand(run_evals.Command):
    def __init__(self, progress: Progress, **kwargs) -> None:
        super().__init__(**kwargs)
        self.job_progress = progress

    def _progress(self, suite: str, done: int, total: int, case_id: str) -> None:
        self.job_progress(done, total, f"{suite}: {case_id}")


@task(queue_name=OWNER_QUEUE)
def eval_run_task(job_id: int) -> str:
    """Run the job's suite (``all`` or one) against its provider and keep the report."""
    from ops.models import Job

    arguments = Job.objects.get(pk=job_id).arguments

    def work(progress: Progress) -> str:
        out = io.StringIO()
        try:
            call_command(_JobCommand(progress), suite=arguments.get("suite", "all"),
                         provider=arguments.get("provider") or None, fault_drop_every=0, dataset=None,
                         stdout=out, stderr=io.StringIO())
        except CommandError as exc:
            if not str(exc).startswith("below threshold"):
                raise
            # A finished run that scored low is a result (stored, in the charts), not a crash.
            return f"{out.getvalue()}\n{exc}"
        return out.getvalue()

    return job_run(job_id=job_id, work=work)

"""Eval runs as background jobs: started from the admin, run by ``manage.py twin_worker``.

The job runs the same service as ``manage.py run_evals`` (``evals.suites``: suites, grading,
history and diff), with its progress going to the job and its report kept as the job's result.
"""

from __future__ import annotations

from django.tasks import task

from evals.suites import run_report, suites_run
from ops.models import Job
from ops.services import OWNER_QUEUE, Progress, job_run


@task(queue_name=OWNER_QUEUE)
def eval_run_task(job_id: int) -> str:
    """Run the job's suite (``all`` or one) against its provider and keep the report."""
    arguments = Job.objects.get(pk=job_id).arguments

    def work(progress: Progress) -> str:
        runs = suites_run(suite=arguments.get("suite", "all"), provider=arguments.get("provider") or None,
                          progress=lambda suite, done, total, case_id: progress(done, total, f"{suite}: {case_id}"))
        lines = [line for result, run in runs for line in run_report(result, run)]
        lines += ["", "  ".join(f"{r.suite} {r.score:.3f}/{r.dataset.threshold:.2f} {'PASS' if r.passed else 'FAIL'}"
                                for r, _ in runs)]
        failed = [r.suite for r, _ in runs if not r.passed]
        if failed:
            # A finished run that scored low is a result (stored, in the charts), not a crash.
            lines += ["", f"below threshold: {', '.join(failed)}"]
        return "\n".join(lines)

    return job_run(job_id=job_id, work=work)

"""The knowledge sync as a background job (started from the admin, run by ``manage.py twin_worker``)."""

from __future__ import annotations

from django.conf import settings
from django.tasks import task

from knowledge.embedders import get_embedders
from knowledge.services import knowledge_sync
from ops.services import OWNER_QUEUE, job_run


@task(queue_name=OWNER_QUEUE)
def knowledge_sync_task(job_id: int) -> str:
    """Sync the knowledge folder, reporting embedding progress on the job."""

    def work(progress) -> str:
        report = knowledge_sync(root=settings.TWIN_KNOWLEDGE_DIR, embedders=get_embedders(),
                                progress=lambda done, total: progress(done, total, "chunks embedded"))
        return str(report)

    return job_run(job_id=job_id, work=work)

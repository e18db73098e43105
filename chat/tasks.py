"""Chat's background work, run by ``manage.py twin_worker`` (django-tasks-db).

Each task re-reads the state and is idempotent: a retry, a replay or a second worker changes
nothing that already happened.
"""

from __future__ import annotations

from django.tasks import task

from chat.turns.resume import approval_resume_sync


@task
def approval_resume_task(approval_id: int) -> str:
    """Resume the approval's interrupted thread with the owner's decision."""
    return approval_resume_sync(approval_id=approval_id)

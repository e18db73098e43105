"""Background work of the approval loop, run by `manage.py twin_worker` (django-tasks-db).

Each task re-reads the state and is idempotent: a retry, a replay or a second worker changes
nothing that already happened.
"""

from __future__ import annotations

from django.tasks import task

from approvals import services


@task
def approval_resume_task(approval_id: int) -> str:
    """Resume the approval's interrupted thread with the owner's decision."""
    from chat.services import approval_resume_sync

    return approval_resume_sync(approval_id=approval_id)


@task
def contact_message_deliver_task(message_id: int) -> bool:
    """E-mail an approved contact message to the owner (once)."""
    return services.contact_message_deliver(message_id=message_id)



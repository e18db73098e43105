"""Background work of the approval queue, run by ``manage.py twin_worker`` (django-tasks-db).

Each task re-reads the state and is idempotent: a retry, a replay or a second worker changes
nothing that already happened. (The thread's resume after a decision is chat's: ``chat.tasks``.)
"""

from __future__ import annotations

from django.tasks import task

from approvals import delivery


@task
def contact_message_deliver_task(message_id: int) -> bool:
    """E-mail an approved contact message to the owner (once)."""
    return delivery.contact_message_deliver(message_id=message_id)

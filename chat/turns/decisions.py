"""The owner's decisions on contact requests, and the thread's resume they set off.

Approvals owns the request and records the decision (``approvals.services.approval_decision_record``);
chat owns the LangGraph thread the request paused. Every console decides here: the admin, the
API, ``manage.py approvals`` and the digest link's page. The decision is recorded in its
transaction and the resume enqueued after commit; ``approvals_sweep`` (run by the worker)
expires overdue requests the same way and re-enqueues what a crash or a failure left behind.
"""

from __future__ import annotations

import datetime as dt
import uuid

from django.db import transaction
from django.utils import timezone

from approvals import selectors as approval_selectors
from approvals import services as approval_services
from approvals.errors import AlreadyDecided
from approvals.models import PendingApproval
from chat.tasks import approval_resume_task


def _enqueue_resume(approval_id: int) -> None:
    approval_resume_task.enqueue(approval_id)


@transaction.atomic
def approval_decide(*, approval_id: int, decision: str, actor: str, reason: str = "",
                    edits: dict | None = None, conversation_id: uuid.UUID | str | None = None) -> PendingApproval:
    """Decide (approve, edit, reject or expire; see ``approvals.services.approval_decision_record``) and
    resume the paused thread once the decision is committed; if the enqueue fails, the sweep's
    safety net (``resume_next_at``) picks it up."""
    approval = approval_services.approval_decision_record(
        approval_id=approval_id, decision=decision, actor=actor, reason=reason, edits=edits,
        conversation_id=conversation_id)
    transaction.on_commit(lambda: _enqueue_resume(approval.pk), robust=True)
    return approval


def approvals_sweep(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Expire overdue requests, and re-enqueue resumes and deliveries that a crash or a failure
    left behind. Safe to run from several workers at once: every step re-checks under a lock."""
    now = now or timezone.now()
    expired = 0
    for approval_id in approval_selectors.approvals_overdue(now=now):
        try:
            approval_decide(approval_id=approval_id, decision="expire", actor="system (expired)")
            expired += 1
        except AlreadyDecided:
            pass
    resumes = approval_services.resumes_due_claim(now=now)
    for approval_id in resumes:
        _enqueue_resume(approval_id)
    return {"expired": expired, "resumes": len(resumes), "deliveries": approval_services.deliveries_sweep(now=now)}

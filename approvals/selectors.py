"""Reads of the approval queue, shared by the admin, the API and the terminal command."""

from __future__ import annotations

import datetime as dt
import uuid

from django.conf import settings

from approvals.errors import UnknownApproval
from approvals.models import ContactMessage, PendingApproval


def subject(arguments: dict) -> str:
    first = str(arguments.get("message") or "").strip().splitlines()
    return (first[0][:80] if first else "")


def approval_row(approval: PendingApproval) -> dict:
    args = approval.arguments
    return {
        "id": approval.pk, "status": approval.status, "conversation_id": str(approval.conversation_id),
        "action": approval.tool_name, "visitor_name": args.get("visitor_name") or "",
        "visitor_email": args.get("visitor_email") or "", "subject": subject(args),
        "argument_origins": approval.argument_origins, "created_at": approval.created_at,
        "expires_at": approval.expires_at, "decided_by": approval.decided_by, "decided_at": approval.decided_at,
        "resume_status": approval.resume_status or "waiting",
    }


def approval_list(*, status: str | None = "pending", limit: int = 200) -> list[dict]:
    query = PendingApproval.objects.order_by("-created_at")
    if status:
        query = query.filter(status=status)
    return [approval_row(a) for a in query[:limit]]


def approval_get(*, approval_id: int, conversation_id: uuid.UUID | str | None = None) -> PendingApproval:
    query = PendingApproval.objects.filter(pk=approval_id)
    if conversation_id is not None:
        query = query.filter(conversation_id=conversation_id)
    approval = query.first()
    if approval is None:
        raise UnknownApproval(f"no approval {approval_id}")
    return approval


def approval_detail(*, approval_id: int) -> dict:
    approval = PendingApproval.objects.filter(pk=approval_id).first()
    if approval is None:
        raise UnknownApproval(f"no approval {approval_id}")
    return approval_row(approval) | {
        "arguments": approval.arguments, "arguments_sha256": approval.arguments_sha256,
        "final_arguments": approval.final_arguments, "reason": approval.reason,
        "interrupt_id": approval.interrupt_id, "tool_call_id": approval.tool_call_id,
        "resume_error": approval.resume_error, "resumed_at": approval.resumed_at,
    }


def unsettled_approvals(*, conversation_ids) -> dict[str, str]:
    """Conversations whose contact request is still in motion, with the reason: deleting one now
    would drop a decision the owner has yet to take, a follow-up the worker is carrying out or
    a message not yet e-mailed. The data lifecycle leaves these for later (or the owner)."""
    reasons: dict[str, str] = {}
    for approval in PendingApproval.objects.filter(conversation_id__in=conversation_ids).order_by("pk"):
        key = str(approval.conversation_id)
        if approval.status == PendingApproval.Status.PENDING:
            reasons[key] = f"contact request #{approval.pk} waits for a decision: reject (or approve) it first"
        elif approval.resume_status == PendingApproval.Resume.QUEUED or (
                approval.resume_status == PendingApproval.Resume.FAILED
                and approval.resume_attempts < settings.TWIN_RESUME_MAX_ATTEMPTS):
            reasons[key] = f"the worker is still carrying out the decision on contact request #{approval.pk}"
    for message in ContactMessage.objects.filter(approval__conversation_id__in=conversation_ids,
                                                 sent_at__isnull=True, attempts__lt=10).select_related("approval"):
        reasons.setdefault(str(message.approval.conversation_id),
                           f"the approved message of contact request #{message.approval_id} is not e-mailed yet")
    return reasons


def approvals_overdue(*, now: dt.datetime) -> list[int]:
    """Requests still waiting past their expiry time (the sweeper expires them)."""
    return list(PendingApproval.objects.filter(status=PendingApproval.Status.PENDING, expires_at__lte=now)
                .values_list("pk", flat=True))


def approval_states(*, conversation_id: uuid.UUID | str) -> list[dict]:
    """A conversation's contact requests and where each stands (the chat page shows them)."""
    return [{"approval_id": pk, "status": status} for pk, status in
            PendingApproval.objects.filter(conversation_id=conversation_id).order_by("pk").values_list("pk", "status")]

"""Reads of the approval queue, shared by the admin, the API and the terminal command."""

from __future__ import annotations

from approvals.models import PendingApproval
from approvals.services import UnknownApproval


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


def approval_transcript(approval: PendingApproval) -> list[dict]:
    """The conversation's messages up to the request."""
    from chat.models import Message

    return list(Message.objects.filter(conversation_id=approval.conversation_id,
                                       created_at__lte=approval.created_at)
                .values("role", "content", "created_at"))


def approval_detail(*, approval_id: int) -> dict:
    approval = PendingApproval.objects.filter(pk=approval_id).first()
    if approval is None:
        raise UnknownApproval(f"no approval {approval_id}")
    return approval_row(approval) | {
        "arguments": approval.arguments, "arguments_sha256": approval.arguments_sha256,
        "final_arguments": approval.final_arguments, "reason": approval.reason,
        "interrupt_id": approval.interrupt_id, "tool_call_id": approval.tool_call_id,
        "resume_error": approval.resume_error, "resumed_at": approval.resumed_at,
        "transcript": approval_transcript(approval),
    }

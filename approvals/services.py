"""Writes for the approval queue and the messages it lets through."""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from approvals.models import ContactMessage, PendingApproval


class NotApproved(Exception):
    """A high-risk action was attempted without the owner's approval."""


@transaction.atomic
def approval_request(*, conversation_id: uuid.UUID | str, tool_call_id: str, tool_name: str,
                     arguments: dict, interrupt_id: str = "") -> PendingApproval:
    """Queue a high-risk call for the owner. Idempotent per tool call: the interrupting node
    re-runs from its first line on resume, and must not queue the call twice."""
    approval, created = PendingApproval.objects.get_or_create(
        tool_call_id=tool_call_id,
        defaults={"conversation_id": conversation_id, "tool_name": tool_name, "arguments": arguments,
                  "interrupt_id": interrupt_id},
    )
    if not created and interrupt_id and approval.interrupt_id != interrupt_id:
        approval.interrupt_id = interrupt_id
        approval.save(update_fields=["interrupt_id"])
    return approval


@transaction.atomic
def contact_message_send(*, tool_call_id: str, visitor_name: str, visitor_email: str, body: str) -> ContactMessage:
    """Deliver an approved contact message exactly once (one per approval, row-locked)."""
    approval = PendingApproval.objects.select_for_update().filter(tool_call_id=tool_call_id).first()
    if approval is None or approval.status != PendingApproval.Status.APPROVED:
        raise NotApproved(f"tool call {tool_call_id} has no approval from the owner")
    message, _ = ContactMessage.objects.get_or_create(
        approval=approval,
        defaults={"visitor_name": visitor_name, "visitor_email": visitor_email, "body": body,
                  "sent_at": timezone.now()},
    )
    return message

"""What the approval queue refuses, each with the code the API and the consoles show."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from approvals.models import PendingApproval


class ApprovalError(Exception):
    code = "approval_error"

    def __init__(self, message: str, approval: PendingApproval | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.approval = approval


class NotApproved(ApprovalError):
    """A high-risk action was attempted without the owner's approval."""

    code = "not_approved"


class UnknownApproval(ApprovalError):
    code = "unknown_approval"


class AlreadyDecided(ApprovalError):
    code = "already_decided"


class AlreadyPending(ApprovalError):
    code = "already_pending"


class InvalidDecision(ApprovalError):
    code = "invalid_decision"


class DeliveryFailed(ApprovalError):
    code = "delivery_failed"

"""The approval queue over HTTP for scripts and phones: list and decide, behind a bearer token
(``TWIN_ADMIN_TOKEN``, compared in constant time). Without a configured token: 404."""

from __future__ import annotations

import datetime as dt
import hmac
from typing import Literal

from django.conf import settings
from ninja import Router, Schema
from ninja.security import HttpBearer

from approvals import errors, selectors
from chat.turns import decisions
from twinsite.api_errors import ApiError


class AdminToken(HttpBearer):
    def __call__(self, request):
        if not settings.TWIN_ADMIN_TOKEN:
            raise ApiError(404, "not_found")  # the endpoints do not exist without a token
        return super().__call__(request)

    def authenticate(self, request, token: str) -> str | None:
        if hmac.compare_digest(token.encode(), settings.TWIN_ADMIN_TOKEN.encode()):
            return "api-token"
        return None


router = Router(auth=AdminToken(), tags=["admin"])


class ApprovalOut(Schema):
    id: int
    status: str
    conversation_id: str
    action: str
    visitor_name: str
    visitor_email: str
    subject: str
    argument_origins: dict
    created_at: dt.datetime
    expires_at: dt.datetime
    decided_by: str
    decided_at: dt.datetime | None
    resume_status: str


class DecisionIn(Schema):
    decision: Literal["approve", "edit", "reject"]
    reason: str = ""
    arguments: dict[str, str | None] | None = None  # the fields to change, for "edit"
    decided_by: str = "api"


@router.get("/approvals", response=list[ApprovalOut])
def approvals_list(request, status: Literal["pending", "approved", "rejected", "expired", "all"] = "pending"):
    return selectors.approval_list(status=None if status == "all" else status)


@router.post("/approvals/{approval_id}/decide", response=ApprovalOut)
def approval_decide(request, approval_id: int, payload: DecisionIn):
    try:
        approval = decisions.approval_decide(
            approval_id=approval_id, decision=payload.decision, actor=f"{payload.decided_by[:100]} (api)",
            reason=payload.reason, edits=payload.arguments if payload.decision == "edit" else None)
    except errors.UnknownApproval as exc:
        raise ApiError(404, exc.code, exc.message) from exc
    except errors.AlreadyDecided as exc:
        raise ApiError(409, exc.code, exc.message) from exc
    except errors.ApprovalError as exc:
        raise ApiError(422, exc.code, exc.message) from exc
    return selectors.approval_row(approval)

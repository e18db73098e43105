"""The JSON API (django-ninja): health, visitor feedback, the streaming chat and the approvals."""

from __future__ import annotations

from typing import Literal

from django.db import connection
from ninja import NinjaAPI, Schema, Status
from ninja.errors import HttpError
from ninja.utils import check_csrf

from approvals.api import router as approvals_router
from chat.api import RateLimited
from chat.api import router as chat_router
from chat.models import Feedback, Message
from chat.views import SESSION_KEY

api = NinjaAPI(title="Twinsite API", version="1")
api.add_router("/admin", approvals_router)
api.add_router("", chat_router)


@api.exception_handler(RateLimited)
def rate_limited(request, exc: RateLimited):
    response = api.create_response(request, {"detail": "rate_limited", "retry_after": exc.retry_after}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


class HealthOut(Schema):
    status: str
    database: bool


class FeedbackIn(Schema):
    message_id: int
    rating: Literal[1, -1]
    comment: str = ""


class FeedbackOut(Schema):
    id: int


@api.get("/health", response=HealthOut)
def health(request) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"status": "ok", "database": True}


class VisitorSession:
    """Visitor endpoints: the session's own conversation, JSON only, and Django's CSRF check
    (the chat page sends the token in X-CSRFToken), so another site cannot post for a visitor."""

    def __call__(self, request):
        if request.content_type != "application/json":
            raise HttpError(415, "json_required")
        if check_csrf(request) is not None:
            raise HttpError(403, "csrf_failed")
        return True


@api.post("/feedback", response={201: FeedbackOut, 200: FeedbackOut}, auth=VisitorSession())
def feedback_create(request, payload: FeedbackIn) -> Status:
    """Rate an answer of your own conversation; rating it again replaces the first rating."""
    message = Message.objects.filter(
        pk=payload.message_id, role=Message.Role.ASSISTANT,
        conversation_id=request.session.get(SESSION_KEY),
    ).first()
    if message is None:
        raise HttpError(404, "unknown_message")
    if len(payload.comment) > 2000:
        raise HttpError(422, "comment_too_long")
    item, created = Feedback.objects.update_or_create(
        message=message, defaults={"rating": payload.rating, "comment": payload.comment})
    return Status(201 if created else 200, {"id": item.pk})

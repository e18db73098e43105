"""The JSON API (django-ninja): health and visitor feedback."""

from __future__ import annotations

from typing import Literal

from django.db import connection
from ninja import NinjaAPI, Schema, Status
from ninja.errors import HttpError

from approvals.api import router as approvals_router
from chat.models import Feedback, Message
from chat.views import SESSION_KEY

api = NinjaAPI(title="Twinsite API", version="1")
api.add_router("/admin", approvals_router)


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


@api.post("/feedback", response={201: FeedbackOut})
def feedback_create(request, payload: FeedbackIn) -> Status:
    # Visitors rate answers of their own conversation only.
    message = Message.objects.filter(
        pk=payload.message_id, role=Message.Role.ASSISTANT,
        conversation_id=request.session.get(SESSION_KEY),
    ).first()
    if message is None:
        raise HttpError(404, "unknown_message")
    if len(payload.comment) > 2000:
        raise HttpError(422, "comment_too_long")
    item = Feedback.objects.create(message=message, rating=payload.rating, comment=payload.comment)
    return Status(201, {"id": item.pk})

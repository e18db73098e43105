"""The chat over HTTP: ``POST /api/chat`` streams the WebSocket's events as server-sent events,
with the same validation, limits, guards, budget and session binding (``chat.turns.admission``);
``POST /api/feedback`` rates an answer of the visitor's own conversation."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import StreamingHttpResponse
from ninja import Router, Schema, Status
from ninja.utils import check_csrf

from chat.embed import conversation_from_token
from chat.models import Conversation
from chat.services import (
    FEEDBACK_COMMENT_CHARS,
    CommentTooLong,
    TurnRejected,
    UnknownMessage,
    conversation_create,
    feedback_create,
    ip_hash,
)
from chat.texts import language
from chat.texts import text as say
from chat.turns.admission import SESSION_KEY, conversation_owned, turn_admit, turn_events, visitor_key
from chat.validation import question_problem
from guards import limits
from ops.access import staff_may_read
from twinsite.api_errors import ApiError, RateLimited
from twinsite.clientip import client_ip_from_request
from twinsite.db import database_sync_to_async

router = Router(tags=["chat"])


class VisitorSession:
    """Visitor endpoints: the session's own conversation, JSON only, and Django's CSRF check
    (the chat page sends the token in X-CSRFToken), so another site cannot post for a visitor."""

    def __call__(self, request):
        if request.content_type != "application/json":
            raise ApiError(415, "json_required", "Send the body as application/json.")
        # The embedded chat (chat/embed.py) has no cookies: its signed token names its conversation.
        # A custom header is never sent across sites without CORS, which this API does not allow.
        if "X-Twin-Token" in request.headers:
            conversation_id = conversation_from_token(request.headers["X-Twin-Token"])
            if conversation_id is None:
                raise ApiError(403, "bad_token", "The conversation token is invalid or expired.")
            request.twin_conversation = conversation_id
            return True
        request.twin_conversation = request.session.get(SESSION_KEY)
        if check_csrf(request) is not None:
            raise ApiError(403, "csrf_failed", "Send Django's CSRF token in the X-CSRFToken header.")
        return True


class FeedbackIn(Schema):
    message_id: int
    rating: Literal[1, -1]
    comment: str = ""


class FeedbackOut(Schema):
    id: int


# The operation ids are those the API had before the endpoints moved here from twinsite/api.py.
@router.post("/feedback", response={201: FeedbackOut, 200: FeedbackOut}, auth=VisitorSession(),
             operation_id="twinsite_api_feedback_create")
def feedback(request, payload: FeedbackIn) -> Status:
    """Rate an answer of your own conversation; rating it again replaces the first rating."""
    decision = limits.address_hit("feedback", ip_key=visitor_key("feedback", request),
                                  client=client_ip_from_request(request), request=request)
    if not decision.allowed:
        raise RateLimited(decision.retry_after)
    try:
        item, created = feedback_create(conversation_id=request.twin_conversation, message_id=payload.message_id,
                                        rating=payload.rating, comment=payload.comment)
    except UnknownMessage:
        raise ApiError(404, "unknown_message", "No answer with this id in your conversation.") from None
    except CommentTooLong:
        raise ApiError(422, "comment_too_long",
                       f"Comments are limited to {FEEDBACK_COMMENT_CHARS} characters.") from None
    return Status(201 if created else 200, {"id": item.pk})


class ChatIn(Schema):
    text: str
    conversation_id: uuid.UUID | None = None  # default: the session's conversation (created if none)


def _sse(event: dict) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"


@router.post("/chat", response={200: None})
async def chat_stream(request, payload: ChatIn):
    """One question; the answer streams back as `text/event-stream` (events as in docs/PROTOCOL.md).
    Errors before the stream starts are JSON in the API's error shape."""
    lang = language(request.LANGUAGE_CODE)  # LocaleMiddleware: the switch's cookie, else Accept-Language
    problem = question_problem(payload.text)
    if problem is not None:
        raise ApiError(422, problem[0], say(f"error.{problem[0]}", lang, max=settings.TWIN_MAX_QUESTION_CHARS))
    ip = client_ip_from_request(request)
    owned = await request.session.aget(SESSION_KEY)
    if payload.conversation_id is not None and not conversation_owned(payload.conversation_id,
                                                                      session_conversation=owned):
        raise ApiError(403, "forbidden", say("error.forbidden", lang))
    conversation_id = owned
    if conversation_id is None or not await Conversation.objects.filter(pk=conversation_id).aexists():
        decision = await database_sync_to_async(limits.address_hit)("conversation", ip_key=ip_hash(ip), client=ip,
                                                                    request=request)
        if not decision.allowed:
            raise RateLimited(decision.retry_after)
        conversation = await database_sync_to_async(conversation_create)(visitor_ip=ip)
        conversation_id = str(conversation.pk)
        await request.session.aset(SESSION_KEY, conversation_id)
    try:
        await turn_admit(conversation_id=conversation_id, ip_key=ip_hash(ip), client=ip)
    except TurnRejected as exc:
        raise RateLimited(exc.params["retry_after"]) from None
    staff = await database_sync_to_async(staff_may_read)(await request.auser())
    response = StreamingHttpResponse(_stream(conversation_id, payload.text.strip(), ip, staff, lang),
                                     content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    response["X-Conversation-Id"] = conversation_id
    return response


async def _stream(conversation_id: str, text: str, ip: str, staff: bool, lang: str) -> AsyncIterator[str]:
    # The request's thread (its session, its user) borrowed a connection from Django's pool and
    # would keep it until the response is closed, after the whole turn: given back now, else 20
    # streams at once would hold the whole pool.
    await sync_to_async(close_old_connections)()
    queue: asyncio.Queue = asyncio.Queue()

    async def emit(event: dict) -> None:
        if event.get("type") != "trace" or staff:
            await queue.put(event)

    async def run() -> None:
        try:
            await turn_events(conversation_id=conversation_id, text=text, emit=emit, visitor_ip=ip, lang=lang)
        finally:
            await queue.put(None)

    # The turn runs to its end (and is recorded) even if the client goes away mid-stream.
    task = asyncio.create_task(run())
    while (event := await queue.get()) is not None:
        yield _sse(event)
    await task

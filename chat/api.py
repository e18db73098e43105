"""The chat over HTTP: ``POST /api/chat`` streams the WebSocket's events as server-sent events,
with the same validation, limits, guards, budget and session binding."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

from django.conf import settings
from django.http import StreamingHttpResponse
from ninja import Router, Schema

from chat.models import Conversation
from chat.services import TurnRejected, conversation_create, ip_hash, turn_run
from chat.texts import language
from chat.texts import text as say
from chat.validation import question_problem
from chat.views import SESSION_KEY
from guards import limits
from twinsite.api_errors import ApiError, RateLimited
from twinsite.clientip import client_ip_from_request
from twinsite.db import database_sync_to_async
from twinsite.outage import DATABASE_GONE

router = Router(tags=["chat"])


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
    if payload.conversation_id is not None and str(payload.conversation_id) != owned:
        raise ApiError(403, "forbidden", say("error.forbidden", lang))
    conversation_id = owned
    if conversation_id is None or not await Conversation.objects.filter(pk=conversation_id).aexists():
        decision = await database_sync_to_async(limits.visitor_hit)("conversation", ip_key=ip_hash(ip))
        if not decision.allowed:
            raise RateLimited(decision.retry_after)
        conversation = await database_sync_to_async(conversation_create)(visitor_ip=ip)
        conversation_id = str(conversation.pk)
        await request.session.aset(SESSION_KEY, conversation_id)
    decision = await database_sync_to_async(limits.visitor_hit)(
        "turn", ip_key=ip_hash(ip), conversation_id=conversation_id)
    if not decision.allowed:
        raise RateLimited(decision.retry_after)
    staff = bool(getattr(await request.auser(), "is_staff", False))
    response = StreamingHttpResponse(_stream(conversation_id, payload.text.strip(), ip, staff, lang),
                                     content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    response["X-Conversation-Id"] = conversation_id
    return response


async def _stream(conversation_id: str, text: str, ip: str, staff: bool, lang: str) -> AsyncIterator[str]:
    queue: asyncio.Queue = asyncio.Queue()

    async def emit(event: dict) -> None:
        if event.get("type") != "trace" or staff:
            await queue.put(event)

    async def run() -> None:
        try:
            await turn_run(conversation_id=conversation_id, text=text, emit=emit, visitor_ip=ip, lang=lang)
        except TurnRejected as exc:
            await queue.put({"type": "error", "in_turn": False, "code": exc.code, "message": exc.text(lang)})
        except DATABASE_GONE:  # Postgres away before the turn could start: said with a code
            await queue.put({"type": "error", "in_turn": False, "code": "unavailable",
                             "message": say("error.unavailable", lang)})
        finally:
            await queue.put(None)

    # The turn runs to its end (and is recorded) even if the client goes away mid-stream.
    task = asyncio.create_task(run())
    while (event := await queue.get()) is not None:
        yield _sse(event)
    await task

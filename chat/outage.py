"""Postgres away (stopped, restarting, unreachable, see ``twinsite.db.DATABASE_GONE``): the one answer a
visitor gets meanwhile: HTTP 503 with ``Retry-After`` and the ``unavailable`` sentence, code
``unavailable`` on the socket and in the API. Fail closed, never a 500. Nothing needs a restart
when Postgres returns: Django's pool and the checkpointer's check a connection before lending it
(``CONN_HEALTH_CHECKS``, ``check_connection``), the lock connection is reopened and the channel
layer listens again."""

from __future__ import annotations

import json
import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.deprecation import MiddlewareMixin
from django.utils.html import escape

from chat.texts import language, language_from_scope
from chat.texts import text as say
from twinsite.db import DATABASE_GONE, database_gone

log = logging.getLogger(__name__)
RETRY_AFTER = 30


def unavailable_response(request: HttpRequest) -> HttpResponse:
    lang = language(getattr(request, "LANGUAGE_CODE", "en"))
    message = say("error.unavailable", lang)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"error": {"code": "unavailable", "message": message}}, status=503)
    else:  # no template, no context processor: nothing here may need the database
        response = HttpResponse(f'<!doctype html><html lang="{lang}"><meta charset="utf-8"><title>503</title>'
                                f"<p>{escape(message)}</p></html>", status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    return response


class DatabaseUnavailableMiddleware(MiddlewareMixin):
    """A page or the admin hitting a database that is away answers 503, not a 500.

    Sync only, and last in ``MIDDLEWARE``: Django then runs the whole stack above it in one
    thread, handed over once a request. Were it async-capable, as the mixin makes it, every
    middleware of the mixin below the last sync-only one would run its ``process_request`` and
    ``process_response`` each in its own hand-over from the event loop to the request's thread
    (a dozen a request; BENCHMARKS.md, issue 59)."""

    sync_capable, async_capable = True, False

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_gone(exception):
            return None
        log.warning("database unavailable on %s %s: %s", request.method, request.path, exception)
        return unavailable_response(request)


class WebsocketUnavailable:
    """ASGI middleware around the socket stack: Channels' session and auth middleware read Postgres
    before a consumer runs, so with Postgres away a handshake would end in an HTTP 500. Instead
    the socket is accepted, told ``unavailable`` and closed with 4503 (like HTTP 503)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive, send) -> None:
        seen = {"received": False, "accepted": False, "over": False}

        async def receiving() -> dict:
            seen["received"] = True
            message = await receive()
            seen["over"] |= message["type"] == "websocket.disconnect"
            return message

        async def sending(message: dict) -> None:
            seen["accepted"] |= message["type"] == "websocket.accept"
            seen["over"] |= message["type"] == "websocket.close"
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        except DATABASE_GONE:
            log.warning("database unavailable for a socket", exc_info=True)
            if seen["over"]:
                return
            if not seen["received"]:
                await receive()  # the handshake's websocket.connect
            if not seen["accepted"]:
                await send({"type": "websocket.accept"})
            error = {"type": "error", "in_turn": False, "code": "unavailable",
                     "message": say("error.unavailable", language_from_scope(scope))}
            await send({"type": "websocket.send", "text": json.dumps(error, ensure_ascii=False)})
            await send({"type": "websocket.close", "code": 4503})

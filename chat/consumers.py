"""The chat WebSocket: one conversation per socket, one turn at a time.

Protocol: docs/PROTOCOL.md. The consumer parses frames and calls ``turn_run``; every failure
a visitor can cause is answered with an ``error`` event carrying a code, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from chat.models import Conversation
from chat.services import TurnRejected, conversation_group, turn_run

log = logging.getLogger(__name__)


class ChatConsumer(AsyncWebsocketConsumer):
    conversation_id: uuid.UUID | None = None
    group: str = ""
    turn: asyncio.Task | None = None
    answered: bool = False

    async def connect(self) -> None:
        raw = self.scope["url_route"]["kwargs"]["conversation_id"]
        try:
            conversation_id = uuid.UUID(raw)
        except ValueError:
            conversation_id = None
        exists = conversation_id is not None and await database_sync_to_async(
            Conversation.objects.filter(pk=conversation_id).exists
        )()
        await self.accept()
        if not exists:
            await self.error("unknown_conversation", "This conversation does not exist. Reload the page.")
            await self.close(code=4404)
            return
        self.conversation_id = conversation_id
        # Outcomes of the owner's decisions arrive from the worker through the channel layer.
        self.group = conversation_group(conversation_id)
        await self.channel_layer.group_add(self.group, self.channel_name)

    async def disconnect(self, code: int) -> None:
        # A running turn is left to finish: it is recorded even if nobody is listening.
        if self.conversation_id is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        self.conversation_id = None

    async def chat_event(self, message: dict) -> None:
        """An event pushed to this conversation by another process (an approval's resume)."""
        if self.conversation_id is not None:
            await self.send_event(message["event"])

    async def error(self, code: str, message: str) -> None:
        """An error outside a turn: final, no ``done`` follows."""
        await self.send_event({"type": "error", "in_turn": False, "code": code, "message": message})

    async def send_event(self, event: dict) -> None:
        if event.get("type") == "done":
            self.answered = True  # the visitor has the whole answer; the turn is only cleaning up
        await self.send(text_data=json.dumps(event, ensure_ascii=False))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.conversation_id is None:
            return
        try:
            frame = json.loads(text_data or "")
        except (TypeError, ValueError):
            await self.error("bad_json", "Frames must be JSON objects.")
            return
        if not isinstance(frame, dict) or frame.get("type") != "ask":
            await self.error("bad_request", 'Send {"type": "ask", "text": "..."}.')
            return
        text = frame.get("text")
        if not isinstance(text, str) or not text.strip():
            await self.error("empty_question", "Ask a question.")
            return
        if len(text) > settings.TWIN_MAX_QUESTION_CHARS:
            await self.error("too_long", f"Questions are limited to {settings.TWIN_MAX_QUESTION_CHARS} "
                             "characters.")
            return
        previous = self.turn
        if previous is not None and not previous.done() and not self.answered:
            await self.error("busy", "Wait for the current answer to finish.")
            return
        # A task, so the consumer keeps handling frames (a second ask is answered "busy").
        self.answered = False
        self.turn = asyncio.create_task(self._run(self.conversation_id, text.strip(), after=previous))

    async def _run(self, conversation_id: uuid.UUID, text: str, after: asyncio.Task | None = None) -> None:
        if after is not None:
            await asyncio.wait([after])  # the previous turn sent "done" and is releasing its lock
        try:
            await turn_run(conversation_id=conversation_id, text=text, emit=self.send_event)
        except TurnRejected as exc:
            await self.error(exc.code, exc.message)
        except Exception:
            log.exception("turn crashed")
            await self.error("internal", "Something went wrong; please try again.")

"""The chat WebSocket: one conversation per socket, one turn at a time.

Protocol: docs/PROTOCOL.md. The consumer parses frames and starts turns through
``chat.turns.admission`` (ownership, turn limits, errors as events, shared with ``POST /api/chat``);
every failure a visitor can cause is answered with an ``error`` event carrying a code, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from urllib.parse import parse_qs

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from chat.embed import SOCKET_PROTOCOL, conversation_from_token, socket_token
from chat.locks import conversation_running
from chat.models import Conversation
from chat.selectors import conversation_since
from chat.services import TurnRejected, conversation_group, ip_hash
from chat.texts import language, language_from_scope
from chat.texts import text as say
from chat.turns.admission import SESSION_KEY, conversation_owned, rejection_event, turn_admit, turn_events
from chat.validation import frame_problem, question_problem
from guards import limits
from ops.access import staff_may_read
from twinsite.clientip import client_ip_from_scope
from twinsite.db import DATABASE_GONE, database_sync_to_async

log = logging.getLogger(__name__)
# A socket that goes on asking past its rate limit is closed after this many refusals in a row
# (code 4429): each refusal still costs a counter update. Sync frames are answered at most
# SYNC_RATE times per SYNC_WINDOW seconds per socket (a page resyncs every second or two while a
# turn runs). Both counted per socket, in the process that holds it, which is all a socket needs.
REFUSALS_BEFORE_CLOSE = 3
SYNC_RATE, SYNC_WINDOW = 30, 60.0
# An open socket's row lives an hour from its last refresh (guards.limits.socket_seen); a turn
# refreshes it once this many seconds have passed, not every turn: one statement less a turn,
# and the row still has at least 55 minutes left after any turn.
SEEN_EVERY = 300.0
TURN_TASK = "twinsite-turn"  # a turn goes on after its socket closes; tests wait for these by name


class ChatConsumer(AsyncWebsocketConsumer):
    conversation_id: uuid.UUID | None = None
    group: str = ""
    turn: asyncio.Task | None = None
    answered: bool = False
    socket_registered: bool = False
    seen_at: float = 0.0  # when the socket's row was last refreshed (monotonic)
    staff: bool = False
    visitor_ip: str = ""
    ip_key: str = ""
    lang: str = "en"
    refusals: int = 0  # rate-limited frames in a row
    syncs: list[float]  # when this socket's recent sync frames came


    async def connect(self) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        # the page's language: the embedded chat says it (?lang=), else switch cookie, else browser
        self.lang = language(query["lang"][0]) if query.get("lang") else language_from_scope(self.scope)
        # the embedded chat's token, offered as a subprotocol (never in the URL: chat.embed)
        offered = self.scope.get("subprotocols") or []
        embedded = conversation_from_token(socket_token(offered))
        raw = self.scope["url_route"]["kwargs"]["conversation_id"]
        try:
            conversation_id = uuid.UUID(raw)
        except ValueError:
            conversation_id = None
        exists = conversation_id is not None and await database_sync_to_async(
            Conversation.objects.filter(pk=conversation_id).exists
        )()
        await self.accept(subprotocol=SOCKET_PROTOCOL if SOCKET_PROTOCOL in offered else None)
        if not exists:
            await self.error("unknown_conversation")
            await self.close(code=4404)
            return
        # A conversation belongs to the browser session that started it: knowing its id is not enough.
        session = self.scope.get("session")
        session_conversation = await database_sync_to_async(session.get)(SESSION_KEY) if session is not None else None
        if not conversation_owned(conversation_id, session_conversation=session_conversation,
                                  token_conversation=embedded):
            await self.error("forbidden")
            await self.close(code=4403)
            return
        user = self.scope.get("user")
        self.staff = user is not None and await database_sync_to_async(staff_may_read)(user)
        self.visitor_ip = client_ip_from_scope(self.scope)
        self.ip_key = ip_hash(self.visitor_ip)
        if not await database_sync_to_async(limits.socket_register)(
                key=f"ip:{self.ip_key}", socket_id=self.channel_name[-64:],
                maximum=settings.TWIN_MAX_SOCKETS_PER_IP):
            await self.error("rate_limited", text_key="error.too_many_sockets")
            await self.close(code=4429)
            return
        self.socket_registered = True
        self.seen_at = time.monotonic()
        self.conversation_id = conversation_id
        # Outcomes of the owner's decisions arrive from the worker through the channel layer.
        self.group = conversation_group(conversation_id)
        await self.channel_layer.group_add(self.group, self.channel_name)

    async def disconnect(self, code: int) -> None:
        # A running turn is left to finish: it is recorded even if nobody is listening.
        if self.conversation_id is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.socket_registered:
            await database_sync_to_async(limits.socket_closed)(socket_id=self.channel_name[-64:])
        self.conversation_id = None

    async def chat_event(self, message: dict) -> None:
        """An event pushed to this conversation by another process (an approval's resume)."""
        if self.conversation_id is not None:
            await self.send_event(message["event"])

    async def error(self, code: str, *, text_key: str = "", **fields: object) -> None:
        """An error outside a turn: final, no ``done`` follows. Its message is the visitor's
        sentence for ``code`` (chat.texts) in the page's language."""
        message = say(text_key or f"error.{code}", self.lang, max=settings.TWIN_MAX_QUESTION_CHARS,
                      seconds=fields.get("retry_after", ""))
        await self.send_event({"type": "error", "in_turn": False, "code": code, "message": message, **fields})

    async def send_event(self, event: dict) -> None:
        if event.get("type") == "trace" and not self.staff:
            return  # diagnostics (provider, model, cost, latency): staff with chat.view_trace only
        if event.get("type") == "done":
            self.answered = True  # the visitor has the whole answer; the turn is only cleaning up
        await self.send(text_data=json.dumps(event, ensure_ascii=False))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            await self._receive(text_data, bytes_data)
        except DATABASE_GONE:  # Postgres away: this frame is answered with a code, the socket stays
            log.warning("database unavailable for a frame", exc_info=True)
            await self.error("unavailable")

    async def _receive(self, text_data: str | None, bytes_data: bytes | None) -> None:
        if self.conversation_id is None:
            return
        problem = frame_problem(text_data, bytes_data)
        if problem is not None:
            await self.error(problem[0])
            return
        frame = json.loads(text_data)
        if isinstance(frame, dict) and frame.get("type") == "sync":
            if self._sync_allowed():
                await self.sync(frame.get("after"))
            else:
                await self.error("rate_limited", retry_after=int(SYNC_WINDOW))
            return
        if not isinstance(frame, dict) or frame.get("type") != "ask":
            await self.error("bad_request")
            return
        problem = question_problem(frame.get("text"))
        if problem is not None:
            await self.error(problem[0])
            return
        previous = self.turn
        if previous is not None and not previous.done() and not self.answered:
            await self.error("busy")
            return
        try:
            await turn_admit(conversation_id=self.conversation_id, ip_key=self.ip_key, client=self.visitor_ip)
        except TurnRejected as exc:
            await self.send_event(rejection_event(exc, self.lang))
            self.refusals += 1
            if self.refusals >= REFUSALS_BEFORE_CLOSE:
                await self.close(code=4429)
            return
        self.refusals = 0
        if time.monotonic() - self.seen_at >= SEEN_EVERY:
            await database_sync_to_async(limits.socket_seen)(socket_id=self.channel_name[-64:])
            self.seen_at = time.monotonic()
        # A task, so the consumer keeps handling frames (a second ask is answered "busy").
        self.answered = False
        self.turn = asyncio.create_task(self._run(self.conversation_id, frame["text"].strip(), after=previous),
                                        name=f"{TURN_TASK}:{self.conversation_id}")

    def _sync_allowed(self) -> bool:
        now = time.monotonic()
        self.syncs = [t for t in getattr(self, "syncs", []) if now - t < SYNC_WINDOW]
        if len(self.syncs) >= SYNC_RATE:
            return False
        self.syncs.append(now)
        return True

    async def _run(self, conversation_id: uuid.UUID, text: str, after: asyncio.Task | None = None) -> None:
        if after is not None:
            await asyncio.wait([after])  # the previous turn sent "done" and is releasing its lock
        await turn_events(conversation_id=conversation_id, text=text, emit=self.send_event,
                          visitor_ip=self.visitor_ip, lang=self.lang)

    async def sync(self, after: object) -> None:
        """What a (re)connecting page missed: the answers after its latest one (``after``: a
        message id), the contact requests' states, and whether a turn is still running (then the
        page asks again shortly). A turn goes on when its socket drops; its answer is stored."""
        if after is not None and (not isinstance(after, int) or isinstance(after, bool) or after < 0):
            await self.error("bad_request")
            return
        since = await database_sync_to_async(conversation_since)(
            conversation_id=self.conversation_id, after=after or 0)
        running = (self.turn is not None and not self.turn.done()) or await conversation_running(
            self.conversation_id)
        await self.send_event({"type": "history", "running": running, **since})


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Every WebSocket path that is not a chat: refused at the handshake."""

    async def connect(self) -> None:
        await self.close()

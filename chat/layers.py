"""A cross-process Channels layer on Postgres LISTEN/NOTIFY: no Redis needed.

Used so the worker can push an approval's outcome (and the streamed follow-up) to a visitor's
socket served by a daphne process. Group membership is local to each process: ``group_send``
publishes one NOTIFY and every listening process delivers it to its own members. Payloads
over Postgres' 8000-byte NOTIFY limit travel through the unlogged table
``twinsite_layer_payload`` (created by migration ``chat/0003``) and the NOTIFY carries their id.

Delivery is at most once and only to sockets connected at that moment, as with any channel
layer; what a visitor missed is in the database and shown when the page is reopened.
Connections are per event loop (psycopg binds them to it) and closed by
``chat.checkpoints.close_pools``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
import weakref
from collections import defaultdict
from dataclasses import dataclass, field

from channels.exceptions import ChannelFull
from channels.layers import BaseChannelLayer
from psycopg import AsyncConnection, OperationalError

from twinsite.db import conninfo
from twinsite.listen import listen_forever

log = logging.getLogger(__name__)
NOTIFY_CHANNEL = "twinsite_layer"
INLINE_LIMIT = 7000  # bytes; Postgres refuses NOTIFY payloads from 8000 on


@dataclass
class _LoopState:
    queues: dict[str, asyncio.Queue] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    listener: asyncio.Task | None = None
    listening: asyncio.Event = field(default_factory=asyncio.Event)
    sender: AsyncConnection | None = None
    send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)


_layers: weakref.WeakSet[PostgresNotifyChannelLayer] = weakref.WeakSet()


class PostgresNotifyChannelLayer(BaseChannelLayer):
    extensions = ["groups", "flush"]

    def __init__(self, expiry: int = 60, capacity: int = 100, **kwargs) -> None:
        super().__init__(expiry=expiry, capacity=capacity, **kwargs)
        self.client_id = uuid.uuid4().hex[:12]
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        _layers.add(self)

    # --- per-loop state and connections ---------------------------------------------------------

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            state = self._loops[loop] = _LoopState()
        return state

    @staticmethod
    async def _connect() -> AsyncConnection:
        return await AsyncConnection.connect(conninfo(), autocommit=True)

    async def _ensure_listening(self, state: _LoopState) -> None:
        if state.listener is None or state.listener.done():
            state.listening.clear()
            state.listener = asyncio.create_task(self._listen(state), name="twinsite-layer-listener")
        await state.listening.wait()

    async def _listen(self, state: _LoopState) -> None:
        """Postgres restarted or the network blinked: listen again (twinsite.listen); messages
        sent meanwhile are lost, as with any channel layer (the database has the truth), and
        receivers are not blocked while it reconnects."""
        async def deliver(payload: str) -> None:
            try:
                await self._deliver(state, payload)
            except Exception:  # one bad message must not stop the pushes of the process
                log.exception("channel layer could not deliver a message")

        await listen_forever(NOTIFY_CHANNEL, application_name="twinsite-layer", on_note=deliver,
                             on_listening=state.listening.set, on_lost=state.listening.set)

    async def _deliver(self, state: _LoopState, payload: str) -> None:
        if payload.startswith("#"):
            # Not on the listening connection: psycopg holds its lock while yielding notifies.
            async with await self._connect() as conn:
                row = await (await conn.execute("SELECT body FROM twinsite_layer_payload WHERE id = %s",
                                                (int(payload[1:]),))).fetchone()
            if row is None:
                return
            payload = row[0]
        envelope = json.loads(payload)
        if "g" in envelope:
            targets = list(state.groups.get(envelope["g"], ()))
        else:
            targets = [envelope["c"]] if envelope["c"] in state.queues else []
        for channel in targets:
            queue = state.queues.get(channel)
            if queue is not None and queue.qsize() < self.capacity:
                queue.put_nowait(envelope["m"])

    async def _publish(self, envelope: dict) -> None:
        state = self._state()
        body = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
        async with state.send_lock:
            for attempt in (1, 2):
                if state.sender is None or state.sender.closed:
                    state.sender = await self._connect()
                try:
                    if len(body.encode()) <= INLINE_LIMIT:
                        await state.sender.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, body))
                    else:
                        await state.sender.execute(
                            "DELETE FROM twinsite_layer_payload WHERE created < now() - interval '5 minutes'")
                        row = await (await state.sender.execute(
                            "INSERT INTO twinsite_layer_payload (body) VALUES (%s) RETURNING id", (body,))).fetchone()
                        await state.sender.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, f"#{row[0]}"))
                    return
                except OperationalError:
                    state.sender = None
                    if attempt == 2:
                        raise

    # --- the channel layer API ------------------------------------------------------------------

    async def new_channel(self, prefix: str = "specific") -> str:
        return f"{prefix}.{self.client_id}!{uuid.uuid4().hex}"

    async def send(self, channel: str, message: dict) -> None:
        self.require_valid_channel_name(channel)
        queue = self._state().queues.get(channel)
        if queue is not None:
            if queue.qsize() >= self.capacity:
                raise ChannelFull(channel)
            queue.put_nowait(message)
            return
        await self._publish({"c": channel, "m": message})

    async def receive(self, channel: str) -> dict:
        self.require_valid_channel_name(channel)
        state = self._state()
        queue = state.queues.setdefault(channel, asyncio.Queue())
        await self._ensure_listening(state)
        try:
            return await queue.get()
        except asyncio.CancelledError:
            # the consumer went away: forget its queue and memberships
            state.queues.pop(channel, None)
            for members in state.groups.values():
                members.discard(channel)
            raise

    async def group_add(self, group: str, channel: str) -> None:
        self.require_valid_group_name(group)
        self.require_valid_channel_name(channel)
        state = self._state()
        state.groups[group].add(channel)
        await self._ensure_listening(state)

    async def group_discard(self, group: str, channel: str) -> None:
        self.require_valid_group_name(group)
        members = self._state().groups.get(group)
        if members is not None:
            members.discard(channel)

    async def group_send(self, group: str, message: dict) -> None:
        self.require_valid_group_name(group)
        await self._publish({"g": group, "m": message})

    async def flush(self) -> None:
        await self.close_loop()

    async def close_loop(self) -> None:
        loop = asyncio.get_running_loop()
        state = self._loops.pop(loop, None)
        if state is None:
            return
        if state.listener is not None:
            state.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await state.listener
        if state.sender is not None:
            await state.sender.close()


async def close_loop_connections() -> None:
    for layer in list(_layers):
        await layer.close_loop()

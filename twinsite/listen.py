"""Keeping a Postgres LISTEN open: the one reconnect loop of the channel layer (chat.layers) and
the knowledge watch (knowledge.watch).

Connect (TCP keepalives on, so a connection the network dropped is given up in seconds, not the
kernel's minutes), LISTEN, and hand every notification to the caller. Every ``probe_every``
seconds the loop sends a notification to itself, which must come back: through a pooler in
transaction mode LISTEN hears nothing, and a dead connection may stay quiet. On any failure it
tells the caller, waits (``twinsite.retry.backoff_delay``) and connects again. What was sent
while it was away is lost, so a caller treats "listening again" as "anything may have changed".
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import os
from collections.abc import Callable

from psycopg import AsyncConnection
from psycopg.conninfo import make_conninfo

from twinsite.db import conninfo
from twinsite.retry import backoff_delay

log = logging.getLogger(__name__)

PROBE = "probe:"  # a notification's payload that starts so is a listener's probe, for nobody else
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 2,
             "tcp_user_timeout": 15_000}
_probes = itertools.count()


async def listen_forever(channel: str, *, application_name: str, on_note: Callable, on_listening: Callable,
                         on_lost: Callable, stopped: Callable[[], bool] = lambda: False,
                         probe_every: float = 5.0, retry_base: float = 0.5, retry_cap: float = 10.0) -> None:
    """LISTEN on ``channel`` until ``stopped()`` (checked at least every ``probe_every`` seconds)
    or the task is cancelled. ``on_note(payload)`` for every notification but the probes,
    ``on_listening()`` each time the LISTEN is (re)established, ``on_lost()`` each time it is
    lost; each may be a coroutine function."""
    failures = 0
    while not stopped():
        try:
            async with await AsyncConnection.connect(
                    make_conninfo(conninfo(), application_name=application_name, **KEEPALIVE),
                    autocommit=True) as conn:
                await conn.execute(f"LISTEN {channel}")
                await _call(on_listening)
                failures = 0
                while not stopped():
                    await _heard(conn, channel, on_note, probe_every)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("LISTEN %s lost its connection; reconnecting", channel, exc_info=True)
        finally:
            await _call(on_lost)
        if stopped():
            return
        await asyncio.sleep(backoff_delay(failures, base=retry_base, cap=retry_cap))
        failures += 1


async def _heard(conn: AsyncConnection, channel: str, on_note: Callable, probe_every: float) -> None:
    """One probe's span: send it, hand on what comes meanwhile; raise when it does not come back."""
    probe = f"{PROBE}{os.getpid()}:{next(_probes)}"
    await conn.execute("SELECT pg_notify(%s, %s)", [channel, probe])
    echoed = False
    async for note in conn.notifies(timeout=probe_every):
        if note.payload == probe:
            echoed = True
        elif not note.payload.startswith(PROBE):  # another listener's probe is nothing
            await _call(on_note, note.payload)
    if not echoed:
        raise ConnectionError(f"the probe on {channel} did not come back")


async def _call(callback: Callable, *args) -> None:
    result = callback(*args)
    if inspect.isawaitable(result):
        await result

"""One turn at a time per conversation, across every process: a Postgres advisory lock.

The lock is a session lock held on a connection of the loop's lock pool for the length of the
turn (a visitor's turn or a resume by the worker). If the process dies, Postgres ends the
session and the lock with it, so a crash never leaves a conversation locked.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg

from twinsite.db import lock_pool


class ConversationBusy(Exception):
    """Another turn of this conversation is running (in this or another process)."""


def lock_key(conversation_id: uuid.UUID | str) -> int:
    """A signed 64-bit key for ``pg_try_advisory_lock``, namespaced to Twinsite's turns."""
    digest = hashlib.sha256(f"twinsite-turn:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@asynccontextmanager
async def conversation_lock(conversation_id: uuid.UUID | str) -> AsyncIterator[None]:
    key = lock_key(conversation_id)
    pool = await lock_pool()
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
        if not row or not row[0]:
            raise ConversationBusy(str(conversation_id))
        try:
            yield
        finally:
            try:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error:
                # The connection broke (Postgres went away): the lock ends with its session once
                # the connection is closed, and the pool replaces it. The turn's outcome stands.
                await conn.close()


async def conversation_running(conversation_id: uuid.UUID | str) -> bool:
    """Whether a turn of this conversation is running now, in any process (a reconnecting page
    asks, to know whether an answer is still to come)."""
    try:
        async with conversation_lock(conversation_id):
            return False
    except ConversationBusy:
        return True

"""One turn at a time per conversation, across every process: a Postgres advisory lock.

The lock is a session lock, held for the length of the turn (a visitor's turn or a resume by the
worker) on the one lock connection of the process's event loop (``twinsite.db.AdvisoryLocks``):
a process running 200 turns holds one connection for their locks, not 200. If the process dies,
Postgres ends the session and the locks with it, so a crash never leaves a conversation locked.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from twinsite.db import advisory_locks


class ConversationBusy(Exception):
    """Another turn of this conversation is running (in this or another process)."""


def lock_key(conversation_id: uuid.UUID | str) -> int:
    """A signed 64-bit key for ``pg_try_advisory_lock``, namespaced to Twinsite's turns."""
    digest = hashlib.sha256(f"twinsite-turn:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@asynccontextmanager
async def conversation_lock(conversation_id: uuid.UUID | str) -> AsyncIterator[None]:
    key = lock_key(conversation_id)
    locks = advisory_locks()
    if not await locks.try_lock(key):
        raise ConversationBusy(str(conversation_id))
    try:
        yield
    finally:
        # a broken connection is closed instead: the lock ends with its session; the turn's
        # outcome stands
        await locks.unlock(key)


async def conversation_running(conversation_id: uuid.UUID | str) -> bool:
    """Whether a turn of this conversation is running now, in any process (a reconnecting page
    asks, to know whether an answer is still to come)."""
    try:
        async with conversation_lock(conversation_id):
            return False
    except ConversationBusy:
        return True

"""Connection-pool health checks only for connections that sat unused a while.

A pool's ``check`` callback runs an empty query on every connection it lends: one round trip,
and one transaction in Postgres' count, each time: 10.6 of a turn's 24 transactions (both pools;
BENCHMARKS.md, issue 21), spent on connections that had answered a query milliseconds before.
These callbacks check a connection only when it was last lent more than ``IDLE_CHECK_AFTER``
seconds ago (or never): under load no check, after a quiet spell the same check as before.

What that gives up: a connection lent within the last ``IDLE_CHECK_AFTER`` seconds before
Postgres restarts (or a proxy cuts it) is not checked at its next lending, so that one request
fails with the usual coded "unavailable" error (never a 500) and psycopg drops the broken
connection when it comes back to the pool; the next request gets a fresh one.

Per process, like the pools themselves: each connection object remembers its own last lending.
"""

from __future__ import annotations

import time
import weakref

from psycopg_pool import AsyncConnectionPool, ConnectionPool

# Seconds a connection may go unlent and still skip the check. Kept short: a connection a busy
# process lends every few milliseconds never reaches it, and a broken one is caught after a
# quiet spell of a couple of seconds as before.
IDLE_CHECK_AFTER = 2.0

_lent_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _due(conn) -> bool:
    """Whether ``conn`` sat unlent long enough to be checked; notes this lending either way."""
    now = time.monotonic()
    last = _lent_at.get(conn)
    _lent_at[conn] = now
    return last is None or now - last > IDLE_CHECK_AFTER


def check_if_idle(conn) -> None:
    """``check`` for a ``psycopg_pool.ConnectionPool`` (Django's pool). A connection that fails
    it is dropped by the pool, and its entry here goes with it (weak keys)."""
    if _due(conn):
        ConnectionPool.check_connection(conn)


async def check_if_idle_async(conn) -> None:
    """``check`` for a ``psycopg_pool.AsyncConnectionPool`` (the checkpointer's)."""
    if _due(conn):
        await AsyncConnectionPool.check_connection(conn)

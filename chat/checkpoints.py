"""LangGraph checkpointer plumbing: connection strings, per-loop async pools, a sync saver.

The tables belong to ``langgraph-checkpoint-postgres`` and are created by its own ``setup()``
from a Django migration. Connection details are read at call time from Django's connection:
built at import time they would point at the dev database while tests run on ``test_...``.
"""

from __future__ import annotations

import asyncio
import weakref

from django.db import connections
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import Connection
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

# Keys of Django's OPTIONS that are Django's own, not libpq connection parameters.
_DJANGO_ONLY_OPTIONS = {"assume_role", "isolation_level", "pool", "server_side_binding", "cursor_factory",
                        "prepare_threshold", "context"}


def conninfo(settings_dict: dict | None = None) -> str:
    """libpq connection string of Django's database, with every libpq option of ``DATABASE_URL``
    (sslmode, sslrootcert, options, connect_timeout...): the checkpointer, turn locks and channel
    layer must reach the database exactly as Django does."""
    sd = settings_dict or connections["default"].settings_dict
    options = {k: v for k, v in (sd.get("OPTIONS") or {}).items() if k not in _DJANGO_ONLY_OPTIONS}
    return make_conninfo(**(options | {
        "dbname": sd["NAME"],
        "user": sd.get("USER") or None,
        "password": sd.get("PASSWORD") or None,
        "host": sd.get("HOST") or None,
        "port": sd.get("PORT") or None,
        "application_name": "twinsite-checkpoints",
    }))


def setup_tables(settings_dict: dict) -> None:
    """Run LangGraph's own migrations (``CREATE INDEX CONCURRENTLY`` needs autocommit)."""
    with Connection.connect(conninfo(settings_dict), autocommit=True, prepare_threshold=0,
                            row_factory=dict_row) as conn:
        PostgresSaver(conn).setup()


def sync_saver_connection() -> Connection:
    """A connection for a sync ``PostgresSaver`` (resuming from another process, admin)."""
    return Connection.connect(conninfo(), autocommit=True, prepare_threshold=0, row_factory=dict_row)


# A pool is bound to the event loop it was opened in, so there is one saver (and pool) per
# running loop.
_savers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncPostgresSaver] = (
    weakref.WeakKeyDictionary()
)


async def async_saver() -> AsyncPostgresSaver:
    """The running loop's checkpointer; the same object for every turn on that loop."""
    loop = asyncio.get_running_loop()
    saver = _savers.get(loop)
    if saver is None:  # close_pools() removes closed ones
        pool = AsyncConnectionPool(
            conninfo(),
            min_size=1,
            max_size=5,
            open=False,
            # autocommit: a checkpoint must be visible to other processes at once;
            # prepare_threshold=0 keeps it working behind pgbouncer.
            kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": 0},
            check=AsyncConnectionPool.check_connection,
            # A checkpoint write takes milliseconds: waiting longer for a connection means Postgres
            # is away, and the visitor should hear so within seconds (30 by default).
            timeout=10,
        )
        # stored before the await, so a second turn arriving meanwhile shares this pool
        saver = _savers[loop] = AsyncPostgresSaver(pool)
        await pool.open()
    return saver


# Turn locks hold a connection for the length of a turn: their own pool, so a turn waiting for
# a checkpoint connection can never be starved by the locks of other turns.
_lock_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncConnectionPool] = (
    weakref.WeakKeyDictionary()
)


async def lock_pool() -> AsyncConnectionPool:
    loop = asyncio.get_running_loop()
    pool = _lock_pools.get(loop)
    if pool is None:
        pool = AsyncConnectionPool(
            conninfo(), min_size=0, max_size=50, open=False, timeout=30, max_idle=60,
            kwargs={"autocommit": True, "prepare_threshold": 0},
            check=AsyncConnectionPool.check_connection,
        )
        _lock_pools[loop] = pool
        await pool.open()
    return pool


async def close_pools() -> None:
    """Close the running loop's pools and channel-layer connections (shutdown, test teardown)."""
    from chat.layers import close_loop_connections

    loop = asyncio.get_running_loop()
    saver = _savers.pop(loop, None)
    if saver is not None:
        await saver.conn.close()
    pool = _lock_pools.pop(loop, None)
    if pool is not None:
        await pool.close()
    await close_loop_connections()

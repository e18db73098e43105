"""LangGraph checkpointer plumbing: per-loop async pools, a sync saver, closing a loop's pools.

The tables belong to ``langgraph-checkpoint-postgres`` and are created by its own ``setup()``
from a Django migration. Connection details are read at call time from Django's connection
(``twinsite.db.conninfo``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncCursor, Connection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from chat.layers import close_loop_connections
from twinsite.db import advisory_locks_close, conninfo
from twinsite.pool_checks import check_if_idle_async

# When a run's checkpoint is written: once, when the run ends (answered, failed or paused at an
# interrupt), not after every super-step (LangGraph's default writes ~7 checkpoints and ~50 rows
# a turn). What a process killed mid-run loses is that run's progress, which was never kept for
# use anyway: the sweeper (``chat.turns.recovery``) finds the thread where the turn before left it and
# records the turn as aborted; a contact request drafted in that run stays a request (its row is
# written by the node) and is carried out on approval without the thread
# (``done_without_thread``). Every graph run passes it.
DURABILITY = "exit"


def setup_tables(settings_dict: dict) -> None:
    """Run LangGraph's own migrations (``CREATE INDEX CONCURRENTLY`` needs autocommit)."""
    with Connection.connect(conninfo(settings_dict), autocommit=True, prepare_threshold=0,
                            row_factory=dict_row) as conn:
        PostgresSaver(conn).setup()


def sync_saver_connection() -> Connection:
    """A connection for a sync ``PostgresSaver`` (resuming from another process, admin)."""
    return Connection.connect(conninfo(), autocommit=True, prepare_threshold=0, row_factory=dict_row)


class PooledSaver(AsyncPostgresSaver):
    """LangGraph's saver over a pool, without the library's process-wide lock: it serialises
    every read and write of the saver (all visitors' turns) on one ``asyncio.Lock``, which a
    single shared connection needs and a pool, handing each call its own connection, does not.
    A checkpoint's writes stay pipelined as the library sends them: one implicit transaction up to
    the pipeline's sync, so its blobs and its row are kept together or not at all
    (``tests/chat/test_checkpoint_saver.py``)."""

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        if not isinstance(self.conn, AsyncConnectionPool) or self.pipe is not None:
            async with super()._cursor(pipeline=pipeline) as cur:
                yield cur
            return
        async with self.conn.connection() as conn:
            if pipeline and self.supports_pipeline:
                async with conn.pipeline(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            elif pipeline:
                async with conn.transaction(), conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur
            else:
                async with conn.cursor(binary=True, row_factory=dict_row) as cur:
                    yield cur


# A pool is bound to the event loop it was opened in, so there is one saver (and pool) per
# running loop.
_savers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PooledSaver] = (
    weakref.WeakKeyDictionary()
)


async def async_saver() -> PooledSaver:
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
            check=check_if_idle_async,  # only a connection that sat unlent a while
            # A checkpoint write takes milliseconds: waiting longer for a connection means Postgres
            # is away, and the visitor should hear so within seconds (30 by default).
            timeout=10,
            # Give up reconnecting after 2 s (the default retries with a growing back-off for 5
            # minutes): once Postgres is back, the next turn's request connects at once instead
            # of waiting for the back-off (seen: a turn 10 s after the outage still failed).
            reconnect_timeout=2.0,
        )
        # stored before the await, so a second turn arriving meanwhile shares this pool
        saver = _savers[loop] = PooledSaver(pool)
        await pool.open()
    return saver


async def close_pools() -> None:
    """Close the running loop's pools and channel-layer connections (shutdown, test teardown)."""
    saver = _savers.pop(asyncio.get_running_loop(), None)
    if saver is not None:
        await saver.conn.close()
    await advisory_locks_close()
    await close_loop_connections()

"""Database plumbing: the ORM from async code on a pool of threads, raw psycopg connections.

Channels' ``database_sync_to_async`` runs every call of every socket on asgiref's one shared
thread, so at 50 visitors the turns queue behind each other for the database. This one runs
them on ``TWIN_DB_THREADS`` threads, each keeping its own persistent connection
(``CONN_MAX_AGE``, checked before reuse with ``CONN_HEALTH_CHECKS``), and closes stale
connections around each call as Channels does. Each call is a whole unit of work (a service
function with its own transaction), so which thread runs it does not matter.

This pool is per process; a server with several processes has a pool in each, and Postgres
sees at most processes x TWIN_DB_THREADS connections from them (plus the checkpointer's pools).
"""

from __future__ import annotations

import asyncio
import weakref
from concurrent.futures import ThreadPoolExecutor

import psycopg
from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from psycopg.conninfo import make_conninfo
from psycopg_pool import AsyncConnectionPool

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603 (one pool per process, made on first use)
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.TWIN_DB_THREADS, thread_name_prefix="twinsite-db")
    return _executor


class _PooledSyncToAsync(DatabaseSyncToAsync):
    def __init__(self, func) -> None:
        super().__init__(func, thread_sensitive=False, executor=_pool())


def database_sync_to_async(func):
    """Like ``channels.db.database_sync_to_async``, on the pool of database threads."""
    return _PooledSyncToAsync(func)


# --- raw psycopg connections (checkpointer, turn locks, channel layer, backups) -------------------

# Keys of Django's OPTIONS that are Django's own, not libpq connection parameters.
_DJANGO_ONLY_OPTIONS = {"assume_role", "isolation_level", "pool", "server_side_binding", "cursor_factory",
                        "prepare_threshold", "context"}


def conninfo(settings_dict: dict | None = None) -> str:
    """libpq connection string of Django's database, with every libpq option of ``DATABASE_URL``
    (sslmode, sslrootcert, options, connect_timeout...): the checkpointer, turn locks and channel
    layer must reach the database exactly as Django does. Read at call time: built at import time
    it would point at the dev database while tests run on ``test_...``."""
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


# Postgres away (stopped, restarting, unreachable): Django's wrappers and psycopg's own (the
# checkpointer's, lock and layer pools; a pool's timeout waiting for a connection is a psycopg
# OperationalError too).
DATABASE_GONE = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


def database_gone(exc: BaseException) -> bool:
    return isinstance(exc, DATABASE_GONE)


# Session advisory locks hold a connection for the length of a turn: their own pool per event
# loop (psycopg binds a pool to the loop it was opened in), so a turn waiting for a checkpoint
# connection can never be starved by the locks of other turns.
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


async def lock_pool_close() -> None:
    """Close the running loop's lock pool (shutdown, test teardown)."""
    pool = _lock_pools.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()

"""The ORM from async code, on a pool of database threads.

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

from concurrent.futures import ThreadPoolExecutor

from channels.db import DatabaseSyncToAsync
from django.conf import settings

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

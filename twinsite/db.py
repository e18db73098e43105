"""Database plumbing: the ORM from async code on a pool of threads, raw psycopg connections.

Channels' ``database_sync_to_async`` runs every call of every socket on asgiref's one shared
thread, so at 50 visitors the turns queue behind each other for the database. This one runs
them on ``TWIN_DB_THREADS`` threads; each call borrows a connection from Django's psycopg pool
(``TWIN_DB_POOL_SIZE``, health-checked) and gives it back afterwards, as Channels closes old
connections around each call. Each call is a whole unit of work (a service function with its
own transaction), so which thread runs it does not matter.

Both are per process; a server with several processes has them in each, and Postgres sees at
most processes x (TWIN_DB_POOL_SIZE + the checkpointer's pool, 5, + the lock connection + the
channel layer's two) connections from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psycopg
from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections, reset_queries
from psycopg.conninfo import make_conninfo

log = logging.getLogger(__name__)

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603 (one pool per process, made on first use)
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=settings.TWIN_DB_THREADS, thread_name_prefix="twinsite-db")
    return _executor


class _PooledSyncToAsync(DatabaseSyncToAsync):
    def __init__(self, func) -> None:
        super().__init__(func, thread_sensitive=False, executor=_pool())

    def thread_handler(self, loop, *args, **kwargs):
        # Under DEBUG Django logs every statement of a connection until the next request starts;
        # these threads serve no request, so each call starts its own log, as a request does (else
        # each thread's log fills to 9,000 statements: ~60 MB of a benchmark's soak).
        reset_queries()
        return super().thread_handler(loop, *args, **kwargs)


def database_sync_to_async(func):
    """Like ``channels.db.database_sync_to_async``, on the pool of database threads."""
    return _PooledSyncToAsync(func)


async def kept_or_read[T](kept: Callable[[], T | None], read: Callable[[], T]) -> T:
    """``kept()`` when it has the value (a process's cache, read on the event loop), else ``read``
    on a database thread. A hand-over to a thread and back costs ~0.1 ms of the loop's CPU and as
    much of the thread's; a turn read three such values that change once a day or per document."""
    value = kept()
    return value if value is not None else await database_sync_to_async(read)()


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
# checkpointer's and layer pools, the lock connection; a pool's timeout waiting for a connection is a psycopg
# OperationalError too).
DATABASE_GONE = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


def database_gone(exc: BaseException) -> bool:
    return isinstance(exc, DATABASE_GONE)


# Session advisory locks: one connection per event loop (so one per serving process) holds the
# lock of every turn the loop runs, instead of a pooled connection per running turn; 200 slow
# turns cost one connection, not 200. psycopg binds an async connection to the loop it was opened
# in, hence one per loop.
LOCK_TIMEOUT = 10.0  # seconds for taking or releasing a lock: longer means Postgres is away


class AdvisoryLocks:
    """The loop's lock connection and the keys it holds.

    Postgres lets one session take a key again (it counts), so the keys held are also kept here:
    a key this process holds is busy for its other turns as it is for other processes. These
    sets hold only in this process; Postgres decides between processes.

    If the connection breaks, Postgres has ended its session and every lock with it. The next
    use opens a new connection and takes the held keys again; a key another process took in
    between is logged (two turns of that conversation may then overlap, as whenever Postgres
    restarts mid-turn).
    """

    def __init__(self) -> None:
        self.conn: psycopg.AsyncConnection | None = None
        self.held: set[int] = set()  # taken in Postgres by this connection's session
        self.claimed: set[int] = set()  # being taken right now (a second try meanwhile is busy)
        self._connecting = asyncio.Lock()
        self._reopening: asyncio.Task | None = None

    def _usable(self, conn: psycopg.AsyncConnection | None = None) -> bool:
        conn = conn or self.conn
        return conn is not None and not conn.closed and not conn.broken

    async def _connection(self) -> psycopg.AsyncConnection:
        if self._usable():
            return self.conn
        async with self._connecting:
            if not self._usable():
                await self._drop()
                self.conn = await psycopg.AsyncConnection.connect(
                    make_conninfo(conninfo(), application_name="twinsite-locks"),
                    autocommit=True, prepare_threshold=0)
                if self.held:
                    wanted = sorted(self.held)
                    lost = await (await self.conn.execute(
                        "SELECT k FROM unnest(%s::bigint[]) AS k WHERE NOT pg_try_advisory_lock(k)",
                        (wanted,))).fetchall()
                    if lost:
                        log.warning("lock connection reopened: %d running turns' locks were taken by "
                                    "another process meanwhile", len(lost))
                    # turns that ended while this ran let go: their keys go too
                    if ended := set(wanted) - self.held - {k for (k,) in lost}:
                        await self.conn.execute("SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k",
                                                (sorted(ended),))
            return self.conn

    async def _drop(self, conn: psycopg.AsyncConnection | None = None) -> None:
        """Close ``conn`` (by default the current one), ending its session and its locks; a
        connection already replaced is closed without touching its successor."""
        conn = conn or self.conn
        if conn is None:
            return
        if conn is self.conn:
            self.conn = None
        if not conn.closed:
            with contextlib.suppress(Exception):
                await conn.close()

    def _reopen_soon(self) -> None:
        """After a drop while turns still hold keys: take them again now, not at the next turn."""
        if self.held and (self._reopening is None or self._reopening.done()):
            self._reopening = asyncio.get_running_loop().create_task(self._reopen())

    async def _reopen(self) -> None:
        with contextlib.suppress(Exception):  # Postgres away: the next turn tries again
            async with asyncio.timeout(LOCK_TIMEOUT):
                await self._connection()

    async def try_lock(self, key: int) -> bool:
        """Take ``key`` unless anyone (this process included) holds it. Raises psycopg's
        OperationalError when Postgres cannot be reached within ``LOCK_TIMEOUT``."""
        if key in self.held or key in self.claimed:
            return False
        self.claimed.add(key)
        try:
            async with asyncio.timeout(LOCK_TIMEOUT):
                try:
                    row = await self._take(key)
                except psycopg.OperationalError:
                    # a connection Postgres ended since its last use (restart, terminated) says
                    # so only now: once more on a new one, which takes the held keys again
                    row = await self._take(key)
        except TimeoutError:
            raise psycopg.OperationalError("the lock connection did not answer in time") from None
        finally:
            self.claimed.discard(key)
        if row and row[0]:
            self.held.add(key)
            return True
        return False

    async def _take(self, key: int) -> tuple | None:
        conn = await self._connection()
        try:
            return await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
        except BaseException:
            # failed, timed out or cancelled mid-query: whether Postgres took the key is not
            # known, so the connection goes (and the key with it, if taken); the other running
            # turns take theirs again at once
            await self._drop(conn)
            self._reopen_soon()
            raise

    async def unlock(self, key: int) -> None:
        # shielded: a turn cancelled while it lets go still lets go
        await asyncio.shield(self._unlock(key))

    async def _unlock(self, key: int) -> None:
        conn = self.conn
        if not self._usable(conn):
            self.held.discard(key)  # its session is gone, and the lock with it
            return
        try:
            async with asyncio.timeout(LOCK_TIMEOUT):
                await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            self.held.discard(key)
        except (psycopg.Error, TimeoutError):
            self.held.discard(key)
            # unusable: closing it ends its session and every lock of it, which the other
            # running turns take again at once
            await self._drop(conn)
            self._reopen_soon()

    async def close(self) -> None:
        self.held.clear()
        if self._reopening is not None:
            self._reopening.cancel()
        await self._drop()


_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AdvisoryLocks] = weakref.WeakKeyDictionary()


def advisory_locks() -> AdvisoryLocks:
    """The running loop's lock connection (opened on first use)."""
    loop = asyncio.get_running_loop()
    locks = _locks.get(loop)
    if locks is None:
        locks = _locks[loop] = AdvisoryLocks()
    return locks


async def advisory_locks_close() -> None:
    """Close the running loop's lock connection, releasing its locks (shutdown, test teardown)."""
    locks = _locks.pop(asyncio.get_running_loop(), None)
    if locks is not None:
        await locks.close()

"""Whether the knowledge base changed, without asking Postgres on every turn.

A statement trigger on ``knowledge_document`` (migration 0003) sends ``NOTIFY twinsite_knowledge``
after every insert, update, delete or truncate, whoever writes (the sync, the admin, a shell);
Postgres delivers it when the writing transaction commits. Each process that asks keeps one
connection LISTENing, in a daemon thread, and counts what it hears: a *generation*. A value read
from the documents (the prompt's knowledge version, the citation links) is kept for the
generation it was read in, and read again once the generation moves. Opening (or reopening) the
connection moves it too, so a change made while the process was not listening is never missed;
while it is not listening, ``generation()`` is None and every caller reads Postgres as before.

Per process: each process holds one more connection (``application_name`` twinsite-watch). Off
with ``TWIN_KNOWLEDGE_WATCH=0`` (the test run's in-process code, whose changes are rolled back
and so never announced, keeps it off).
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable
from typing import TypeVar

import psycopg
from django.conf import settings
from psycopg.conninfo import make_conninfo

from twinsite.db import conninfo

log = logging.getLogger(__name__)

CHANNEL = "twinsite_knowledge"
_CHECK_EVERY_S = 5.0  # the connection is probed this often, so a deaf or dead one is noticed
_RETRY_AFTER_S = 1.0
_PROBE = "probe:"
# a connection the network dropped without a word is given up in seconds, not the kernel's minutes
_KEEPALIVE = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 2,
              "tcp_user_timeout": 15_000}

T = TypeVar("T")


class KnowledgeWatch:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self._listening = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._values: dict[str, tuple[int, object]] = {}
        self._probes = itertools.count()

    def generation(self) -> int | None:
        """The current generation, or None when changes are not being heard (yet)."""
        if not settings.TWIN_KNOWLEDGE_WATCH:
            return None
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, name="knowledge-watch", daemon=True)
                self._thread.start()
            return self._generation if self._listening else None

    def cached(self, key: str, read: Callable[[], T]) -> T:
        """``read()``'s value, read once per generation; every time while not listening."""
        generation = self.generation()
        if generation is not None:
            with self._lock:
                kept = self._values.get(key)
            if kept is not None and kept[0] == generation:
                return kept[1]  # type: ignore[return-value]
        value = read()
        # kept only if nothing was announced while it was read (it may predate that change)
        if generation is not None and self.generation() == generation:
            with self._lock:
                self._values[key] = (generation, value)
        return value

    def _moved(self, *, listening: bool) -> None:
        with self._lock:
            self._generation += 1
            self._listening = listening

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(make_conninfo(conninfo(), application_name="twinsite-watch", **_KEEPALIVE),
                                     autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._moved(listening=True)
                    while not self._stop.is_set():
                        # the probe: a notification to ourselves, which must come back. Through a
                        # pooler in transaction mode LISTEN hears nothing, and a dead connection
                        # may stay quiet: either way the echo is missing, and we stop trusting it.
                        probe = f"{_PROBE}{os.getpid()}:{next(self._probes)}"
                        conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, probe])
                        echoed = False
                        for note in conn.notifies(timeout=_CHECK_EVERY_S):
                            if note.payload == probe:
                                echoed = True
                            elif not note.payload.startswith(_PROBE):  # another process's probe is no change
                                self._moved(listening=True)
                        if not echoed:
                            raise RuntimeError("the watch's own notification did not come back")
            except Exception:  # any failure: not listening, so callers read Postgres
                log.warning("knowledge watch lost its connection; reading the knowledge version per call",
                            exc_info=True)
            finally:
                self._moved(listening=False)
            self._stop.wait(_RETRY_AFTER_S)

    def stop(self) -> None:
        """Stop listening and close the connection (tests: before their database is dropped)."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2 * _CHECK_EVERY_S + 5)
        with self._lock:
            if thread is None or not thread.is_alive():  # else the old one still owns the watch
                self._thread = None
            self._listening = False
            self._values.clear()


WATCH = KnowledgeWatch()

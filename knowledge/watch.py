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

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

from twinsite.listen import listen_forever

CHANNEL = "twinsite_knowledge"
_CHECK_EVERY_S = 5.0  # the connection is probed this often, so a deaf or dead one is noticed

T = TypeVar("T")


class KnowledgeWatch:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = 0
        self._listening = False
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._values: dict[str, tuple[int, object]] = {}

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

    def peek(self, key: str) -> object | None:
        """``key``'s value when it is kept for the current generation, else None: what
        ``cached`` would return without reading, for a caller on the event loop that reads
        Postgres on a thread only when it must."""
        generation = self.generation()
        with self._lock:
            kept = self._values.get(key)
        return kept[1] if generation is not None and kept is not None and kept[0] == generation else None

    def _moved(self, *, listening: bool) -> None:
        with self._lock:
            self._generation += 1
            self._listening = listening

    def _run(self) -> None:
        # any failure means not listening, so callers read Postgres until it listens again
        asyncio.run(listen_forever(
            CHANNEL, application_name="twinsite-watch", on_note=lambda payload: self._moved(listening=True),
            on_listening=lambda: self._moved(listening=True), on_lost=lambda: self._moved(listening=False),
            stopped=self._stop.is_set, probe_every=_CHECK_EVERY_S))

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

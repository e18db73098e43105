"""Shared fixtures. Tests run on the real Postgres (embedded unless DATABASE_URL is set)."""

from __future__ import annotations

import hashlib
import os
import socket
import time

import numpy as np
import pytest

if not os.environ.get("DATABASE_URL"):
    # `make test` starts it already; this keeps a bare `pytest` working on a fresh clone.
    from twinsite import pgserver

    pgserver.start()

from django.conf import settings

from knowledge import embedders as embedders_module

_VECTORS: dict[tuple[str, str, str], np.ndarray] = {}
_DEVELOPMENT_DATABASE = dict(settings.DATABASES["default"])  # before pytest-django renames it test_...


def _synced_passages() -> None:
    """The passages ``make bootstrap`` embedded into the development database, by model and text:
    the same model's vectors of the same text, so each test process (one per xdist worker) need
    not embed the sample again (about 50 s of CPU for both models). A text not there is embedded."""
    import psycopg

    from twinsite.db import conninfo

    try:
        with psycopg.connect(conninfo(_DEVELOPMENT_DATABASE), connect_timeout=5) as conn:
            rows = conn.execute("SELECT embed_model, search_text, embedding::real[] FROM knowledge_knowledgechunk"
                                ).fetchall()
    except psycopg.Error:
        return  # no development database (DATABASE_URL elsewhere, or not migrated): embed as before
    for model, text, vector in rows:
        _VECTORS.setdefault((model, "p", text), np.array(vector, dtype=np.float32))


class CachingEmbedder:
    """The real model, with vectors remembered for the session: transactional tests empty the
    tables after each test, and re-embedding the sample every time would cost seconds."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.relevance_floor = getattr(inner, "relevance_floor", 0.0)
        self.second_margin = getattr(inner, "second_margin", None)
        self.passage_calls = 0

    def passages(self, texts: list[str]) -> np.ndarray:
        self.passage_calls += 1
        missing = [t for t in texts if (self.name, "p", t) not in _VECTORS]
        if missing:
            for text, vector in zip(missing, self.inner.passages(missing), strict=True):
                _VECTORS[(self.name, "p", text)] = vector
        return np.array([_VECTORS[(self.name, "p", t)] for t in texts]).reshape(len(texts), self.dimensions)

    def query(self, text: str) -> np.ndarray:
        key = (self.name, "q", text)
        if key not in _VECTORS:
            _VECTORS[key] = self.inner.query(text)
        return _VECTORS[key]


class HashEmbedder:
    """A tiny deterministic embedder of another dimension (8): exercises the path for a model
    without its own HNSW index. Bag of hashed words, L2-normalised."""

    name = "test/hash-8"
    dimensions = 8
    relevance_floor = 0.0

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimensions, dtype=np.float32)
        for word in text.lower().split():
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0  # noqa: S324
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector + 1 / np.sqrt(self.dimensions)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.array([self._vector(t) for t in texts]).reshape(len(texts), self.dimensions)

    def query(self, text: str) -> np.ndarray:
        return self._vector(text)


_REAL_BUILD = embedders_module.build_embedder
_CACHED: dict[str, CachingEmbedder] = {}


def cached_build(kind: str):
    if kind not in _CACHED:
        _CACHED[kind] = CachingEmbedder(_REAL_BUILD(kind))
    return _CACHED[kind]


@pytest.fixture(scope="session", autouse=True)
def _cached_embedders():
    _synced_passages()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embedders_module, "build_embedder", cached_build)
        yield


@pytest.fixture(scope="session", autouse=True)
def _no_connections_left(django_db_setup, django_db_blocker):
    """Django's pool and the psycopg pools keep connections open; end them before pytest-django
    drops the test database, which refuses while anyone is connected. First: this process's
    connections reach its own test database (a pool made before it existed would not)."""
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        assert cursor.fetchone()[0] == connection.settings_dict["NAME"], "Django's pool serves another database"
    yield

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch):
    """Tests talk to loopback only; anything else is a bug in the test or the code."""
    real_connect = socket.socket.connect

    def guarded(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not (host.startswith("127.") or host in ("localhost", "::1") or
                                          host.startswith("/")):
            raise RuntimeError(f"test tried to reach {address!r}")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _ratelimit_clock_stands_still(monkeypatch):
    """django-ratelimit ends each key's window at a second of its own (the period's start plus a
    jitter from the key), so a count that runs across that second starts again and a test fails
    at that minute of every hour. Its clock stands still in each test: each count reads one window.
    (The servers the tests start keep the real clock.)"""
    import types

    import django_ratelimit.core

    now = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", types.SimpleNamespace(time=lambda: now))


@pytest.fixture
def embedders():
    return embedders_module.get_embedders()


@pytest.fixture
def kb(db, embedders):
    """The shipped sample knowledge base, synced into the test database."""
    from knowledge.services import knowledge_sync

    return knowledge_sync(root=settings.TWIN_KNOWLEDGE_DIR, embedders=embedders)


@pytest.fixture
async def checkpoint_pool():
    """Afterwards: let turns still running (a socket closed mid-answer) finish, then close this
    test loop's pools (else the test DB stays in use, and its flush deadlocks with a turn)."""
    import asyncio

    from chat.checkpoints import close_pools
    from chat.consumers import TURN_TASK

    yield
    turns = [t for t in asyncio.all_tasks() if t.get_name().startswith(TURN_TASK)]
    if turns:
        await asyncio.wait(turns, timeout=60)
    await close_pools()


async def session_headers(*conversation_ids, ip: str | None = None) -> list[tuple[bytes, bytes]]:
    """Origin and a session cookie owning ``conversation_ids`` (the last one is current), as the
    chat page's browser would send them; ``ip`` as an X-Forwarded-For hop."""
    from channels.db import database_sync_to_async
    from django.contrib.sessions.backends.db import SessionStore

    from chat.turns.admission import SESSION_KEY

    @database_sync_to_async
    def create() -> str:
        store = SessionStore()
        if conversation_ids:
            store[SESSION_KEY] = str(conversation_ids[-1])
        store.create()
        return store.session_key

    key = await create()
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"cookie", f"sessionid={key}".encode())]
    if ip:
        headers.append((b"x-forwarded-for", ip.encode()))
    return headers


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """``TWIN_NO_SKIPS=1`` (CI): a skipped test fails, naming what the machine lacks. A test that
    skips where a tool is missing would otherwise pass CI without ever running."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("TWIN_NO_SKIPS") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped, and TWIN_NO_SKIPS=1 forbids skips: {reason}"

"""Postgres connections of a serving process stay bounded however many visitors arrive at once:
Django borrows from its pool (``TWIN_DB_POOL_SIZE``), every running turn's lock shares one
connection. Under ASGI each HTTP request runs in a thread of its own; with persistent per-thread
connections every request left an idle connection behind (40 page loads: ~40 connections)."""

from __future__ import annotations

import asyncio
import threading

import httpx
import psycopg
import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text
from tests.faults.conftest import Daphne, fake_provider_env, twin_env
from twinsite.db import conninfo

pytestmark = pytest.mark.django_db(transaction=True)
NAME = "twin-under-test"


class Sampler(threading.Thread):
    """The most connections the server under test had open at once, by application name."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.highest: dict[str, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        with psycopg.connect(conninfo(), autocommit=True) as conn:
            while not self.stop.is_set():
                for name, count in conn.execute(
                        "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND application_name IN (%s, 'twinsite-locks') GROUP BY 1", (NAME,)).fetchall():
                    self.highest[name] = max(self.highest.get(name, 0), count)
                self.stop.wait(0.02)


def test_forty_page_loads_at_once_hold_no_more_connections_than_the_pool(tmp_path, processes):
    env = twin_env(TWIN_DB_POOL_SIZE="4", TWIN_TRUSTED_PROXIES="1")
    env["DATABASE_URL"] += f"?application_name={NAME}"
    server = Daphne(env, tmp_path / "daphne.log")
    processes.append(server)

    async def crowd() -> list[int]:
        async with httpx.AsyncClient(timeout=60) as client:
            pages = await asyncio.gather(*(client.get(server.url + "/", headers={"X-Forwarded-For": f"10.9.0.{n}"})
                                           for n in range(40)))
        return [page.status_code for page in pages]

    sampler = Sampler()
    sampler.start()
    try:
        statuses = asyncio.run(crowd())
        statuses += asyncio.run(crowd())
    finally:
        sampler.stop.set()
        sampler.join()
    assert statuses == [200] * 80
    assert 1 <= sampler.highest[NAME] <= 4  # the pool's size, not one per request


def test_slow_api_streams_give_their_request_connection_back_to_the_pool(tmp_path, processes):
    """``POST /api/chat`` streams for the whole turn; the request's thread must not keep its
    pooled connection that long, or a few slow streams hold the pool and everyone else waits."""
    with FakeOpenAI() as fake:
        for _ in range(4):
            fake.add(Reply(chunks=sse_text("She ", "builds ", "software."), wait=4.0))
        env = twin_env(TWIN_DB_POOL_SIZE="2", TWIN_TRUSTED_PROXIES="1", **fake_provider_env(fake.base_url))
        server = Daphne(env, tmp_path / "daphne.log")
        processes.append(server)

        async def ask(n: int) -> str:
            async with httpx.AsyncClient(timeout=60) as client:
                response = await client.post(server.url + "/api/chat", json={"text": "What does she build?"},
                                             headers={"X-Forwarded-For": f"10.8.0.{n}"})
                assert response.status_code == 200, response.text
                return response.text

        async def crowd() -> list[str]:
            return await asyncio.gather(*(ask(n) for n in range(4)))

        streams = asyncio.run(crowd())
    for stream in streams:
        assert "event: done" in stream and "unavailable" not in stream and "software." in stream

"""twinsite.listen: the one LISTEN loop of the channel layer and the knowledge watch hears every
notification but its probes, and listens again after its connection is killed."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest

from twinsite.db import conninfo
from twinsite.listen import listen_forever

pytestmark = pytest.mark.django_db(transaction=True)


async def _until(check, within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _notify(payload: str) -> None:
    async with await psycopg.AsyncConnection.connect(conninfo(), autocommit=True) as conn:
        await conn.execute("SELECT pg_notify('twinsite_test', %s)", [payload])


async def test_notifications_are_handed_on_and_a_killed_connection_listens_again():
    notes: list[str] = []
    states: list[str] = []
    task = asyncio.create_task(listen_forever(
        "twinsite_test", application_name="twinsite-test-listen", on_note=notes.append,
        on_listening=lambda: states.append("listening"), on_lost=lambda: states.append("lost"),
        probe_every=0.2, retry_base=0.05))
    try:
        await _until(lambda: states == ["listening"])
        await _notify("first")
        await _until(lambda: notes == ["first"])
        await asyncio.sleep(0.5)  # a few probes went round: none reached the caller
        assert notes == ["first"]
        async with await psycopg.AsyncConnection.connect(conninfo(), autocommit=True) as admin:
            killed = await (await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'twinsite-test-listen' AND datname = current_database()")).fetchall()
        assert killed == [(True,)]
        await _until(lambda: states == ["listening", "lost", "listening"])
        await _notify("second")
        await _until(lambda: notes == ["first", "second"])
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert states[-1] == "lost"

"""Pools check a connection only after it sat unlent a while (twinsite.pool_checks): a real pool
on the test database, its connection killed from another session."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest
from django.db import connection
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from tests.backends import terminate
from twinsite import pool_checks
from twinsite.db import conninfo

pytestmark = pytest.mark.django_db(transaction=True)


def _pid(pool: ConnectionPool) -> int:
    with pool.connection() as conn:
        return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def test_the_django_database_pool_uses_the_idle_check():
    assert connection.settings_dict["OPTIONS"]["pool"]["check"] is pool_checks.check_if_idle


def test_a_connection_lent_just_before_is_not_checked_one_idle_longer_is(monkeypatch):
    with ConnectionPool(conninfo(), min_size=1, max_size=1, check=pool_checks.check_if_idle, open=True) as pool:
        first = _pid(pool)
        terminate(first)
        # lent again at once: no check, so the dead connection reaches the caller, and the pool
        # drops it when it comes back
        with pytest.raises(psycopg.OperationalError), pool.connection() as conn:
            conn.execute("SELECT 1")
        second = _pid(pool)
        assert second != first

        monkeypatch.setattr(pool_checks, "IDLE_CHECK_AFTER", 0.05)
        terminate(second)
        time.sleep(0.1)
        # unlent longer than IDLE_CHECK_AFTER: checked, found dead, replaced before it is lent
        assert _pid(pool) not in (first, second)


def test_the_checkpointer_pool_check_catches_a_dead_connection_after_a_quiet_spell(monkeypatch):
    monkeypatch.setattr(pool_checks, "IDLE_CHECK_AFTER", 0.05)

    async def scenario() -> tuple[int, int]:
        async with AsyncConnectionPool(conninfo(), min_size=1, max_size=1, open=False,
                                       check=pool_checks.check_if_idle_async) as pool:
            async with pool.connection() as conn:
                before = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
            await asyncio.to_thread(terminate, before)
            await asyncio.sleep(0.1)
            async with pool.connection() as conn:
                after = (await (await conn.execute("SELECT pg_backend_pid()")).fetchone())[0]
            return before, after

    before, after = asyncio.run(scenario())
    assert after != before

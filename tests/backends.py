"""Postgres backends ended from a test. Neither closing a connection nor pg_terminate_backend
waits for the backend to exit, and its advisory locks and socket go only as it exits: a test
that goes on at once races it."""

from __future__ import annotations

import time

import psycopg

from twinsite.db import conninfo


def wait_for_exit(pid: int, timeout: float = 10.0) -> None:
    """Return once backend ``pid`` has left ``pg_stat_activity``."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            assert time.monotonic() < deadline, f"backend {pid} still running after {timeout} s"
            time.sleep(0.02)


def terminate(pid: int) -> None:
    """End backend ``pid`` as a restart or an administrator would, and wait until it is gone."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
    wait_for_exit(pid)

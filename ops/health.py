"""What ``GET /api/health`` reports: can a turn run here? Nothing in it is a secret.

The database and the LangGraph checkpointer are needed for every turn: either failing makes the
site ``degraded`` (HTTP 503). An exhausted budget is reported but is not degraded — the twin
still answers, with the budget refusal.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import DatabaseError, connection
from langgraph.checkpoint.postgres.base import BasePostgresSaver
from psycopg import Connection

from budget.selectors import budget_today
from ops.models import ProviderCheck
from twinsite.db import conninfo

log = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 3
# LangGraph records each of its schema migrations as a row v = 0, 1, ...; the saver of this
# version expects all of them (a library upgrade without its migration shows up here).
CHECKPOINT_SCHEMA_VERSION = len(BasePostgresSaver.MIGRATIONS) - 1


def database_check() -> dict:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        log.warning("health: database unreachable", exc_info=True)
        return {"ok": False}
    return {"ok": True}


def checkpointer_check() -> dict:
    """The checkpoint tables through the checkpointer's own connection settings (not Django's
    open connection), with their schema version."""
    try:
        with Connection.connect(conninfo(), connect_timeout=CHECK_TIMEOUT_S, autocommit=True) as conn:
            row = conn.execute(
                "SELECT (SELECT max(v) FROM checkpoint_migrations), to_regclass('checkpoints') IS NOT NULL"
                " AND to_regclass('checkpoint_blobs') IS NOT NULL AND to_regclass('checkpoint_writes') IS NOT NULL"
            ).fetchone()
    except Exception:  # psycopg's errors, and anything else: the answer is "not reachable"
        log.warning("health: checkpointer unreachable", exc_info=True)
        return {"ok": False, "schema_version": None, "expected_version": CHECKPOINT_SCHEMA_VERSION}
    version, tables = row
    return {"ok": bool(tables) and version == CHECKPOINT_SCHEMA_VERSION, "schema_version": version,
            "expected_version": CHECKPOINT_SCHEMA_VERSION}


def provider_config() -> dict:
    # Whether a key is set, never the key; no base URL either (it can carry credentials or
    # name internal hosts).
    return {"name": settings.TWIN_PROVIDER, "model": settings.TWIN_MODEL,
            "offline": settings.TWIN_PROVIDER == "offline", "api_key_set": bool(settings.TWIN_API_KEY)}


def provider_check() -> dict | None:
    """The latest ``manage.py check_provider`` of the configured provider and model, if any."""
    if settings.TWIN_PROVIDER == "offline":
        return None
    try:
        check = ProviderCheck.objects.filter(provider=settings.TWIN_PROVIDER, model=settings.TWIN_MODEL).first()
    except DatabaseError:
        return None
    if check is None:
        return None
    return {"ok": check.ok, "checked_at": check.checked_at.isoformat(), **check.result}


def budget_check() -> dict:
    try:
        meter = budget_today()
    except DatabaseError:
        log.warning("health: budget meter unreadable", exc_info=True)
        # as budget_exhausted(): an unreadable meter counts as exhausted
        return {"ok": False, "day": None, "spent_usd": None, "reserved_usd": None,
                "limit_usd": str(settings.TWIN_DAILY_BUDGET_USD), "exhausted": True}
    return {"ok": True, "day": meter["day"].isoformat(), "spent_usd": str(meter["spent_usd"]),
            "reserved_usd": str(meter["reserved_usd"]), "limit_usd": str(meter["limit_usd"]),
            "exhausted": meter["exhausted"]}


# The anonymous status, kept this long per process: an unthrottled endpoint that opened a
# connection per call is a lever for anyone. One refresher at a time per process, behind a lock;
# the others are served the last value meanwhile (only the very first calls wait for it). Per
# process only (each serving process checks on its own); a monitor that needs the live parts
# uses the metrics token.
STATUS_SECONDS = 5.0
_status: dict[str, tuple[float, str]] = {}
_refreshing = threading.Lock()


def health_status(now: float | None = None) -> str:
    """``ok`` or ``degraded``, checked at most once per ``STATUS_SECONDS`` in this process."""
    now = time.monotonic() if now is None else now
    kept = _status.get("last")
    if kept is not None and now - kept[0] < STATUS_SECONDS:
        return kept[1]
    if not _refreshing.acquire(blocking=kept is None):
        return kept[1]  # another call is refreshing it: the last value until then
    try:
        kept = _status.get("last")
        if kept is None or now - kept[0] >= STATUS_SECONDS:
            kept = _status["last"] = (now, anonymous_status())
        return kept[1]
    finally:
        _refreshing.release()


def health_status_forget() -> None:
    """Drop the kept status (tests, and after a fault is mended)."""
    _status.clear()


def anonymous_status() -> str:
    """What a stranger's status reads: the database (one query on Django's pooled connection) and
    the budget; the checkpointer, which opens a connection of its own, only in the authorised
    report (``health_report``)."""
    return "ok" if database_check()["ok"] and budget_check()["ok"] else "degraded"


def health_report() -> dict:
    report = {"database": database_check(), "checkpointer": checkpointer_check(),
              "provider": provider_config(), "provider_check": provider_check(), "budget": budget_check()}
    healthy = report["database"]["ok"] and report["checkpointer"]["ok"] and report["budget"]["ok"]
    return {"status": "ok" if healthy else "degraded", **report}

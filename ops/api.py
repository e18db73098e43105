"""Operations over the JSON API: ``GET /api/health`` (can a turn run here?)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from ninja import Router, Schema, Status

from ops.access import may_read_operations
from ops.health import health_report, health_status

router = Router(tags=["operations"])


class DatabaseOut(Schema):
    ok: bool


class CheckpointerOut(Schema):
    ok: bool
    schema_version: int | None
    expected_version: int


class ProviderOut(Schema):
    name: str
    model: str
    offline: bool
    api_key_set: bool


class BudgetOut(Schema):
    ok: bool  # the meter could be read
    day: dt.date | None
    spent_usd: str | None
    reserved_usd: str | None
    limit_usd: str
    exhausted: bool


class ProviderCheckOut(Schema):
    """The latest ``manage.py check_provider`` of the configured provider and model."""

    ok: bool
    checked_at: dt.datetime
    streams_text: bool
    streams_tool_calls: bool
    reports_usage: bool
    no_markup: bool
    fits_prompt: bool | None = None  # None: not known (the third request failed for another reason)
    errors: list[str] = []
    fixes: dict[str, str] = {}


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    # the parts, for staff with chat.view_trace or the metrics token only
    database: DatabaseOut | None = None
    checkpointer: CheckpointerOut | None = None
    provider: ProviderOut | None = None
    provider_check: ProviderCheckOut | None = None  # never checked (or offline): null
    budget: BudgetOut | None = None


@router.get("/health", response={200: HealthOut, 503: HealthOut}, auth=None, exclude_unset=True,
            operation_id="twinsite_api_health")  # its id from before it moved here
def health(request) -> Status:
    """``{"status": "ok"}``, or ``degraded`` with 503 when a turn cannot run. Staff with
    ``chat.view_trace`` and monitors with the metrics token also get the parts: database,
    checkpointer, provider configuration, the last provider check and today's budget. Anyone
    else gets a status at most a few seconds old (ops.health.health_status): asking often
    costs nothing."""
    if may_read_operations(request):
        report = health_report()
    else:
        report = {"status": health_status()}
    return Status(200 if report["status"] == "ok" else 503, report)

"""Operations over the JSON API: ``GET /api/health`` (can a turn run here?)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from ninja import Router, Schema, Status

from ops.health import health_report

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


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    database: DatabaseOut
    checkpointer: CheckpointerOut
    provider: ProviderOut
    budget: BudgetOut


@router.get("/health", response={200: HealthOut, 503: HealthOut}, auth=None,
            operation_id="twinsite_api_health")  # its id from before it moved here
def health(request) -> Status:
    """Database, checkpointer, provider configuration and today's budget; 503 when a turn cannot run."""
    report = health_report()
    return Status(200 if report["status"] == "ok" else 503, report)

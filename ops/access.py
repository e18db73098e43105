"""Who may read operational detail (turn traces, metrics, the health report's parts, the API
docs): staff holding ``chat.view_trace`` (superusers hold every permission), or a monitor with
the read-only ``TWIN_METRICS_TOKEN`` as a bearer token. Everyone else sees the status only."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest

PERMISSION = "chat.view_trace"


def staff_may_read(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff
                and user.has_perm(PERMISSION))


def bearer(request: HttpRequest) -> str:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return given.strip() if scheme.lower() == "bearer" else ""


def token_matches(given: str, tokens: list[str]) -> bool:
    return bool(given) and any(hmac.compare_digest(given.encode(), t.encode()) for t in tokens if t)


def may_read_operations(request: HttpRequest) -> bool:
    return staff_may_read(getattr(request, "user", None)) or token_matches(
        bearer(request), [settings.TWIN_METRICS_TOKEN])

"""System checks of the deployment settings (``manage.py check``, also run by ``migrate``)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security)
def proxy_addresses(app_configs=None, **kwargs) -> list[Warning]:
    """Forwarded headers trusted by count with the proxies' addresses left at the default: fine
    for nginx on the same host, wrong for a proxy anywhere else (its headers are then ignored)."""
    if settings.TWIN_TRUSTED_PROXIES and not settings.TWIN_TRUSTED_PROXY_CIDRS_SET:
        return [Warning(
            "TWIN_TRUSTED_PROXIES is set but TWIN_TRUSTED_PROXY_CIDRS is not: X-Forwarded-For is "
            "honoured only from the loopback.",
            hint="Set TWIN_TRUSTED_PROXY_CIDRS to the addresses your proxy connects from "
                 "(e.g. 127.0.0.1/32 for nginx on this host, the container network for compose).",
            id="twinsite.W001")]
    return []

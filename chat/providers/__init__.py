"""Model providers. ``get_provider()`` returns the configured one."""

from __future__ import annotations

from django.conf import settings

from chat.providers.base import Provider
from chat.providers.offline import OfflineProvider
from chat.providers.openai_compat import OpenAICompatibleProvider


def get_provider(name: str | None = None, *, max_attempts: int | None = None,
                 timeout: float | None = None) -> Provider:
    """The configured provider; ``max_attempts`` and ``timeout`` override the settings (a
    start-up check asks once, briefly)."""
    name = name or settings.TWIN_PROVIDER
    if name == "offline":
        return OfflineProvider(owner=settings.TWIN_OWNER_NAME)
    if name != settings.TWIN_PROVIDER:
        raise ValueError(f"provider {name!r} is not configured (TWIN_PROVIDER={settings.TWIN_PROVIDER})")
    return OpenAICompatibleProvider(
        name=name,
        model=settings.TWIN_MODEL,
        base_url=settings.TWIN_BASE_URL,
        api_key=settings.TWIN_API_KEY,
        timeout=timeout or settings.TWIN_PROVIDER_TIMEOUT,
        max_attempts=max_attempts or settings.TWIN_PROVIDER_MAX_ATTEMPTS,
        backoff=settings.TWIN_PROVIDER_BACKOFF,
        drop_every=settings.TWIN_FAULT_DROP_EVERY,
        cut_stream=settings.TWIN_FAULT_CUT_STREAM,
        tool_step_content="" if settings.TWIN_TOOL_STEP_CONTENT == "empty" else None,
    )

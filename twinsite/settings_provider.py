"""The model provider's base URL and model for settings.py: each provider's defaults, checked.

A bad combination is a start-up error (``ImproperlyConfigured``), not a failed first turn.
"""

from __future__ import annotations

from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

# Base URL and model of each hosted provider, used where TWIN_BASE_URL / TWIN_MODEL are unset.
PROVIDER_DEFAULTS = {
    "openai": ("https://api.openai.com/v1", "gpt-4.1-mini"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "gemini-2.5-flash"),
    "deepseek": ("https://api.deepseek.com/v1", "deepseek-chat"),
    "kimi": ("https://api.moonshot.ai/v1", "kimi-k2-0905-preview"),
}


def provider_endpoint(provider: str, base_url: str, model: str, api_key: str) -> tuple[str, str]:
    """``(TWIN_BASE_URL, TWIN_MODEL)`` for ``provider``: the given values, else its defaults."""
    if provider == "offline":
        model = model or "offline-extractive"
    elif provider == "openai_compatible":
        if not base_url:
            raise ImproperlyConfigured("TWIN_BASE_URL must be set when TWIN_PROVIDER=openai_compatible")
        if not model:
            raise ImproperlyConfigured("TWIN_MODEL must be set when TWIN_PROVIDER=openai_compatible")
    else:
        if not api_key:
            raise ImproperlyConfigured(
                f"TWIN_API_KEY (or TWIN_API_KEY_FILE) must be set when TWIN_PROVIDER={provider}"
            )
        default_url, default_model = PROVIDER_DEFAULTS[provider]
        base_url = base_url or default_url
        model = model or default_model
    if base_url and urlparse(base_url).scheme not in {"http", "https"}:
        raise ImproperlyConfigured(f"TWIN_BASE_URL must be an http(s) URL, got {base_url!r}")
    return base_url, model

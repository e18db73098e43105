"""Remove secrets and sensitive numbers before anything reaches a trace row."""

from __future__ import annotations

import functools
import logging
import re

from django.conf import settings

from guards.rules import mask_sensitive

_SECRETS = [
    re.compile(r"\b(sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,})"),  # OpenAI / Anthropic style keys
    re.compile(r"\b(AIza[0-9A-Za-z_-]{30,})"),  # Google API keys
    re.compile(r"(?i)\b(bearer\s+[A-Za-z0-9._~+/=-]{12,})"),
    re.compile(r"(?i)\b((?:api[_-]?key|secret|token|password)\s*[:=]\s*['\"]?[A-Za-z0-9._~+/=-]{8,})"),
]
REDACTED = "[redacted]"


def scrub_text(text: str) -> str:
    keys = (settings.TWIN_API_KEY, settings.TWIN_EMBED_API_KEY)
    if len(text) <= _SHORT:
        return _scrubbed_short(text, keys)
    return _scrubbed(text, keys)


# A trace holds a model's raw stream: thirty-odd chunks a turn, each with the same id, object and
# model and a word or two of text. Short strings are scrubbed once per process (~0.5 ms of CPU a
# turn before); the result depends on the text and the keys only.
_SHORT = 80


@functools.lru_cache(maxsize=4096)
def _scrubbed_short(text: str, keys: tuple[str, str]) -> str:
    return _scrubbed(text, keys)


def _scrubbed(text: str, keys: tuple[str, str]) -> str:
    for secret in keys:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRETS:
        text = pattern.sub(REDACTED, text)
    return mask_sensitive(text)


def scrub(value: object) -> object:
    """Scrub every string inside nested lists and dicts."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: scrub(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(item) for item in value]
    return value


class ScrubbingFormatter(logging.Formatter):
    """Log lines (with their tracebacks) scrubbed like traces: no secrets, no sensitive numbers."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub_text(super().format(record))

"""Structured logs: the JSON formatter (the per-turn line on ``twinsite.turns`` is ``chat.turns.records``).

A turn's line carries only values the code computed (ids, outcome, tokens, cost, latency), never
visitor text; the free text of any record (message, traceback) is scrubbed like a trace.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re

from django.views.debug import SafeExceptionReporterFilter

from guards.scrub import scrub_text


class SecretSettingsFilter(SafeExceptionReporterFilter):
    """Django's filter of error pages and error mails, hiding also the settings that are secret
    without saying so in their names: a notice webhook's address (a Slack webhook's address is its
    credential) and REDIS_URL (it may carry a password)."""

    hidden_settings = re.compile(SafeExceptionReporterFilter.hidden_settings.pattern + "|WEBHOOK|REDIS_URL",
                                 flags=re.IGNORECASE)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, scrubbed message and traceback, and the
    record's ``fields`` (``extra={"fields": {...}}``) as top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": scrub_text(record.getMessage()),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update({key: value for key, value in fields.items() if key not in entry})
        if record.exc_info:
            entry["exception"] = scrub_text(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False, default=str)

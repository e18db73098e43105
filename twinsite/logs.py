"""Structured logs: a JSON formatter and the one line written per turn (logger ``twinsite.turns``).

A turn's line carries only values the code computed (ids, outcome, tokens, cost, latency), never
visitor text; the free text of any record (message, traceback) is scrubbed like a trace.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import TYPE_CHECKING

from chat.scrub import scrub_text

if TYPE_CHECKING:
    from chat.models import TurnLog

turns_log = logging.getLogger("twinsite.turns")


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


def turn_logged(turn: TurnLog, *, refusal: str = "") -> None:
    """Write the turn's JSON line: what happened, what it used, what it cost, how long it took."""
    fields = {
        "event": "turn", "turn_id": turn.pk, "conversation": str(turn.conversation_id), "outcome": turn.outcome,
        "refusal": refusal, "error_code": turn.error_code, "provider": turn.provider, "model": turn.model,
        "input_tokens": turn.input_tokens, "cached_tokens": turn.cached_tokens, "output_tokens": turn.output_tokens,
        "cost_usd": float(turn.cost_usd), "latency_ms": turn.latency_ms, "tool_rounds": turn.tool_rounds,
        "hallucination_risk": turn.hallucination_risk,
    }
    turns_log.info("turn %s %s", turn.pk, turn.outcome, extra={"fields": fields})

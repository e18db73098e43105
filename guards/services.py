from __future__ import annotations

import time
import uuid

from django.db import connection, transaction

from guards.models import GuardIncident
from guards.rules import mask_sensitive


@transaction.atomic
def incident_record(*, guard: str, rule: str, text: str, conversation_id: uuid.UUID | str | None,
                    matched: str = "", view: str = "", ip_hash: str = "") -> GuardIncident:
    return GuardIncident.objects.create(
        guard=guard, rule=rule, excerpt=mask_sensitive(text)[:1000], conversation_id=conversation_id,
        matched=mask_sensitive(matched)[:200], view=view[:20], ip_hash=ip_hash,
    )


def incident_count(*, guard: str, rule: str, ip_hash: str, window_seconds: int,
                   conversation_id: uuid.UUID | str | None = None, now: float | None = None) -> None:
    """Count a repeated refusal (no text of the visitor's): one row per address, guard, rule and
    window, its ``count`` raised on each further refusal. One statement, atomic across processes."""
    now = time.time() if now is None else now
    window = int(now // window_seconds) * window_seconds
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO guards_guardincident
                 (guard, rule, excerpt, matched, view, ip_hash, conversation_id, created_at, last_at, count,
                  window_start)
               VALUES (%s, %s, '', '', '', %s, %s, now(), now(), 1, %s)
               ON CONFLICT (ip_hash, guard, rule, window_start) WHERE window_start IS NOT NULL
               DO UPDATE SET count = guards_guardincident.count + 1, last_at = now()""",
            [guard, rule, ip_hash, str(conversation_id) if conversation_id else None, window])


def incidents_forget(*, conversation_ids: list | None = None, before=None) -> int:
    """Delete incidents of these conversations and/or older than ``before`` (the data lifecycle:
    an incident keeps the visitor's masked words, so it goes with the conversation)."""
    if conversation_ids is None and before is None:
        return 0
    incidents = GuardIncident.objects.all()
    if conversation_ids is not None:
        incidents = incidents.filter(conversation_id__in=conversation_ids)
    if before is not None:
        incidents = incidents.filter(created_at__lt=before)
    return incidents.delete()[0]

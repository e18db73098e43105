from __future__ import annotations

import uuid

from django.db import transaction

from guards.models import GuardIncident
from guards.rules import mask_sensitive


@transaction.atomic
def incident_record(*, guard: str, rule: str, text: str, conversation_id: uuid.UUID | str | None,
                    matched: str = "", view: str = "", ip_hash: str = "") -> GuardIncident:
    return GuardIncident.objects.create(
        guard=guard, rule=rule, excerpt=mask_sensitive(text)[:1000], conversation_id=conversation_id,
        matched=mask_sensitive(matched)[:200], view=view[:20], ip_hash=ip_hash,
    )


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

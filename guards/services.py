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

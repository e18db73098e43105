"""Shared admin building blocks."""

from __future__ import annotations

import re

from django.contrib import admin
from django.core import signing
from django.urls import reverse
from django.utils.html import format_html


class ReadOnlyAdmin(admin.ModelAdmin):
    """Logs and synced content are evidence: staff read them, nobody edits them in the admin."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown under their parent, as read-only as ``ReadOnlyAdmin``: its ``fields``, nothing
    added, changed or deleted."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


def why_link(trace_id: int | None) -> str:
    """One click from a row to the turn's "why" view (the AgentTrace page renders chat/why.html)."""
    if trace_id is None:
        return "-"
    return format_html('<a href="{}">why</a>', reverse("admin:chat_agenttrace_change", args=[trace_id]))


def id_list(raw: str, limit: int = 1000) -> list[int]:
    """Row ids from a comma-separated form value: ASCII digits only, at most ``limit``; anything
    else in it is ignored (a form value is whatever the browser, or a visitor, sent)."""
    return [int(part) for part in raw.split(",") if re.fullmatch(r"[0-9]{1,18}", part.strip())][:limit]


_GROUP_SALT = "twinsite.admin.question-group"


def group_reference(ids: list[int]) -> str:
    """A group of open questions as the list page hands it to the teach and dismiss forms: its
    ids, signed (``SECRET_KEY``), so a form acts on the group it was opened from and no other id."""
    return signing.Signer(salt=_GROUP_SALT).sign(",".join(str(i) for i in ids))


def group_ids(reference: str) -> list[int]:
    """The ids of a ``group_reference``; none for anything else (ids typed into the form, a
    reference altered or cut): no id outside the group is acted on."""
    try:
        return id_list(signing.Signer(salt=_GROUP_SALT).unsign(reference or ""))
    except signing.BadSignature:
        return []

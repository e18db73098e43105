"""Shared admin building blocks."""

from __future__ import annotations

import re

from django.contrib import admin
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

"""The digest's record in the admin: which days went out, and the links it carried (read-only)."""

from __future__ import annotations

from django.contrib import admin

from digest.models import DigestDay, DigestLink
from twinsite.admin_base import ReadOnlyAdmin


@admin.register(DigestDay)
class DigestDayAdmin(ReadOnlyAdmin):
    list_display = ("day", "outcome", "sent_at", "counts", "attempts", "last_error")
    list_filter = ("outcome",)


@admin.register(DigestLink)
class DigestLinkAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "approval", "decision", "expires_at", "used_at", "used_by")
    list_filter = ("decision",)
    list_select_related = ("approval",)
    exclude = ("nonce_sha256",)

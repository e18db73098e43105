from django.contrib import admin

from budget.models import LedgerEntry
from twinsite.admin_base import ReadOnlyAdmin


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "day", "amount_usd", "turn", "note")
    list_filter = ("day",)
    date_hierarchy = "created_at"
    readonly_fields = ("day", "amount_usd", "turn", "note", "created_at")

from django.contrib import admin

from budget.models import LedgerEntry


@admin.register(LedgerEntry)
class LedgerEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "day", "amount_usd", "turn", "note")
    list_filter = ("day",)
    date_hierarchy = "created_at"
    readonly_fields = ("day", "amount_usd", "turn", "note", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

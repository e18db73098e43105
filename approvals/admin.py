from django.contrib import admin

from approvals.models import ContactMessage, PendingApproval


@admin.register(PendingApproval)
class PendingApprovalAdmin(admin.ModelAdmin):
    list_display = ("created_at", "tool_name", "status", "conversation", "decided_by", "decided_at")
    list_filter = ("status", "tool_name")
    readonly_fields = ("conversation", "tool_call_id", "interrupt_id", "tool_name", "arguments", "status",
                       "decided_by", "decided_at", "created_at")

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(ContactMessage)
class ContactMessageAdmin(admin.ModelAdmin):
    list_display = ("created_at", "visitor_name", "visitor_email", "sent_at")
    readonly_fields = ("approval", "visitor_name", "visitor_email", "body", "sent_at", "created_at")

    def has_add_permission(self, request) -> bool:
        return False

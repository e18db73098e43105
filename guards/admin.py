from django.contrib import admin

from guards.models import GuardIncident
from twinsite.admin_base import ReadOnlyAdmin


@admin.register(GuardIncident)
class GuardIncidentAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "guard", "rule", "excerpt_short", "conversation")
    list_filter = ("guard", "rule", "created_at")
    search_fields = ("excerpt",)
    date_hierarchy = "created_at"
    readonly_fields = ("created_at", "guard", "rule", "excerpt", "conversation")

    @admin.display(description="input")
    def excerpt_short(self, obj) -> str:
        return obj.excerpt[:100]

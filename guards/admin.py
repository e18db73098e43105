import datetime as dt

from django.contrib import admin
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone

from chat.models import TurnLog
from chat.selectors import incident_trace_id
from guards.models import GuardIncident
from twinsite.admin_base import ReadOnlyAdmin, why_link


@admin.register(GuardIncident)
class GuardIncidentAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "guard", "rule", "count", "view", "matched", "excerpt_short", "conversation",
                    "ip_short", "why")
    list_filter = ("guard", "rule", "view", "created_at")
    search_fields = ("excerpt", "matched", "rule", "ip_hash")
    date_hierarchy = "created_at"
    readonly_fields = ("created_at", "last_at", "count", "guard", "rule", "view", "matched", "excerpt", "conversation",
                       "ip_hash")
    change_list_template = "admin/guards/guardincident/change_list.html"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_trace_id=incident_trace_id())

    @admin.display(description="why")
    def why(self, obj) -> str:
        return why_link(obj._trace_id)

    @admin.display(description="input (masked)")
    def excerpt_short(self, obj) -> str:
        return obj.excerpt[:100]

    @admin.display(description="IP (hashed)")
    def ip_short(self, obj) -> str:
        return obj.ip_hash[:10]

    def changelist_view(self, request, extra_context=None):
        since = timezone.localdate() - dt.timedelta(days=13)
        rows = (GuardIncident.objects.filter(created_at__date__gte=since)
                .annotate(day=TruncDate("created_at")).values("day", "guard").annotate(n=Sum("count")))
        guards = sorted({r["guard"] for r in rows})
        table: dict = {}
        for r in rows:
            table.setdefault(r["day"], dict.fromkeys(guards, 0))[r["guard"]] = r["n"]
        shielded = dict(TurnLog.objects.filter(created_at__date__gte=since, screen_verdict=TurnLog.ScreenVerdict.SHIELD)
                        .annotate(day=TruncDate("created_at")).values_list("day").annotate(n=Count("id")).order_by())
        for day in shielded:
            table.setdefault(day, dict.fromkeys(guards, 0))
        daily = [(day, [counts[g] for g in guards], sum(counts.values()), shielded.get(day, 0))
                 for day, counts in sorted(table.items(), reverse=True)]
        return super().changelist_view(request, {**(extra_context or {}), "daily_guards": guards,
                                                 "daily_counts": daily, "shielded_total": sum(shielded.values()),
                                                 "shielded_url": reverse("admin:chat_turnlog_changelist")})

"""The budget in the admin: the ledger (read-only, undeletable) and one row per day with a chart."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from budget.models import BudgetDay, LedgerEntry
from twinsite.admin_base import ReadOnlyAdmin


class EvidenceAdmin(ReadOnlyAdmin):
    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # money: nobody edits or deletes it


@admin.register(LedgerEntry)
class LedgerEntryAdmin(EvidenceAdmin):
    list_display = ("created_at", "day", "status", "reserved_usd", "amount_usd", "turn", "conversation", "note")
    list_filter = ("status", "day")
    date_hierarchy = "created_at"
    readonly_fields = ("day", "status", "reserved_usd", "amount_usd", "turn", "conversation", "ip_hash", "note",
                       "expires_at", "settled_at", "created_at")


def chart_svg(days: list[tuple[dt.date, float]], ceiling: float, width: int = 720, height: int = 160):
    """Spend of the last days as bars, with the ceiling as a line: server-rendered, no script."""
    top = max([ceiling, *(v for _, v in days)]) or 1.0
    bar = width / max(len(days), 1)

    def y(value: float) -> float:
        # a day with any spend gets a visible bar (2 px), however far below the ceiling it is
        bar_height = (height - 30) * value / top
        return height - 20 - (max(bar_height, 2.0) if value > 0 else 0.0)

    rect = '<rect x="{}" y="{}" width="{}" height="{}" fill="#417690"><title>{}: ${}</title></rect>'
    bars = format_html_join("", rect, (
        (round(i * bar + 1, 1), round(y(v), 1), round(bar - 2, 1), round(height - 20 - y(v), 1), d.isoformat(),
         f"{v:.4f}") for i, (d, v) in enumerate(days)))
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="daily spend">'
        '{bars}<line x1="0" x2="{w}" y1="{c}" y2="{c}" stroke="#ba2121" stroke-dasharray="4"/>'
        '<text x="4" y="{ct}" font-size="11" fill="#ba2121">ceiling ${ceiling}</text>'
        '<text x="0" y="{h}" font-size="11">{first}</text><text x="{w}" y="{h}" font-size="11" text-anchor="end">'
        '{last}</text></svg>',
        w=width, h=height, bars=bars, c=round(height - 20 - (height - 30) * ceiling / top, 1),
        ct=round(height - 20 - (height - 30) * ceiling / top - 3, 1), ceiling=f"{ceiling:.2f}",
        first=days[0][0].isoformat() if days else "", last=days[-1][0].isoformat() if days else "")


@admin.register(BudgetDay)
class BudgetDayAdmin(EvidenceAdmin):
    list_display = ("day", "spent_usd", "reserved_usd", "ceiling", "turns")
    readonly_fields = ("day", "spent_usd", "reserved_usd", "updated_at")
    change_list_template = "admin/budget/budgetday/change_list.html"

    @admin.display(description="ceiling (today's setting)")
    def ceiling(self, obj) -> str:
        return f"{settings.TWIN_DAILY_BUDGET_USD}"

    @admin.display(description="turns")
    def turns(self, obj) -> int:
        from chat.models import TurnLog

        return TurnLog.objects.filter(created_at__date=obj.day).count()

    def changelist_view(self, request, extra_context=None):
        today = timezone.localdate()
        spent = {d.day: float(d.spent_usd + d.reserved_usd)
                 for d in BudgetDay.objects.filter(day__gt=today - dt.timedelta(days=30))}
        days = [(today - dt.timedelta(days=n), spent.get(today - dt.timedelta(days=n), 0.0)) for n in range(29, -1, -1)]
        return super().changelist_view(request, {**(extra_context or {}),
                                                 "chart": chart_svg(days, float(settings.TWIN_DAILY_BUDGET_USD)),
                                                 "time_zone": settings.TIME_ZONE})

"""The owner's dashboard on the admin's index: today at a glance, each figure linking to its list.

Today is the site's day (``TIME_ZONE``), the same day the budget meter counts, and every time
shown is in that zone (the page says which)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from approvals.models import PendingApproval
from budget.selectors import budget_today
from chat.agent.state import Outcome
from chat.models import TurnLog
from chat.selectors import open_question_groups
from digest.getting_started import getting_started
from digest.models import NoticeDelivery

CHART_DAYS = 7
# A bar for any day with turns: a day of 2 turns beside a day of 400 still shows, with its number.
MIN_BAR_PERCENT = 4


def _day_start(day: dt.date) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min))


def dashboard(user) -> dict:
    """What the index shows ``user`` (only what their permissions let them see)."""
    today = timezone.localdate()
    start = _day_start(today)
    out: dict = {"time_zone": settings.TIME_ZONE, "today": today, "getting_started": getting_started(user)}
    if user.has_perm("chat.view_turnlog"):
        counts = dict(TurnLog.objects.filter(created_at__gte=start).values_list("outcome").annotate(n=Count("id")))
        total = sum(counts.values())
        turns_url = reverse("admin:chat_turnlog_changelist")
        since = {"created_at__gte": start.isoformat()}
        out["turns"] = {
            "total": total, "url": f"{turns_url}?{urlencode(since)}",
            "shares": [
                {"outcome": outcome, "count": counts.get(outcome, 0),
                 "percent": round(100 * counts.get(outcome, 0) / total) if total else 0,
                 "url": f"{turns_url}?{urlencode(since | {'outcome__exact': outcome})}"}
                for outcome in (Outcome.ANSWERED, Outcome.DECLINED, Outcome.REFUSED)],
        }
        first = _day_start(today - dt.timedelta(days=CHART_DAYS - 1))
        per_day = dict(TurnLog.objects.filter(created_at__gte=first)
                       .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
                       .values_list("day").annotate(n=Count("id")))
        peak = max(per_day.values(), default=0)
        out["chart"] = [
            {"day": day, "count": per_day.get(day, 0),
             "percent": 0 if not per_day.get(day) else max(MIN_BAR_PERCENT, round(100 * per_day[day] / peak))}
            for day in (today - dt.timedelta(days=n) for n in range(CHART_DAYS - 1, -1, -1))]
    if user.has_perm("budget.view_budgetday"):
        meter = budget_today()
        used = meter["spent_usd"] + meter["reserved_usd"]
        limit = meter["limit_usd"]
        out["spend"] = {**meter, "used_usd": used, "percent": min(100, round(100 * float(used / limit), 1))
                        if limit else 100, "url": reverse("admin:budget_budgetday_changelist")}
    if user.has_perm("approvals.view_pendingapproval"):
        out["pending"] = {
            "count": PendingApproval.objects.filter(status=PendingApproval.Status.PENDING).count(),
            "url": reverse("admin:approvals_pendingapproval_changelist") + "?status__exact=pending"}
    if user.has_perm("digest.view_noticedelivery"):
        failing = NoticeDelivery.objects.filter(status=NoticeDelivery.Status.FAILED, notice__kind="requests").count()
        if failing:
            out["notices_failing"] = {
                "count": failing,
                "url": reverse("admin:digest_noticedelivery_changelist")
                + "?status__exact=failed&notice__kind__exact=requests"}
    if user.has_perm("chat.view_unansweredquestion"):
        out["unanswered"] = {"groups": open_question_groups()[:5],
                             "url": reverse("admin:chat_unansweredquestion_changelist")}
    return out

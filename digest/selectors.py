"""What the owner's digest says: reads from the apps that own the data, for one period (since
the previous digest, at most a week; the first one covers a day)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Max, Q, Sum
from django.urls import reverse
from django.utils import timezone

from approvals.models import PendingApproval
from approvals.selectors import subject
from budget.selectors import budget_spent
from chat.models import Feedback, TurnLog
from chat.selectors import question_groups
from digest.models import DigestDay, NoticeDelivery
from guards.models import GuardIncident
from knowledge.importing.followed import changes_between
from knowledge.models import TaughtAnswer

QUESTION_GROUPS = 15
FEEDBACK_ROWS = 15
FLAGGED_ROWS = 15


def digest_period(now: dt.datetime) -> dt.datetime:
    """Where this digest starts: when the previous one was sent (nothing twice, nothing missed
    when the worker was away a day or two), at most a week back; a first digest covers a day."""
    previous = DigestDay.objects.filter(sent_at__lt=now).aggregate(last=Max("sent_at"))["last"]
    if previous is None:
        return now - dt.timedelta(days=1)
    return max(previous, now - dt.timedelta(days=7))


def _absolute(path: str) -> str:
    return settings.TWIN_SITE_URL + path


def excerpt(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def pending_approvals() -> list[PendingApproval]:
    """Every request still waiting, oldest first (the one that expires first on top)."""
    return list(PendingApproval.objects.filter(status=PendingApproval.Status.PENDING).order_by("expires_at", "pk"))


def argument_order(arguments: dict) -> list[str]:
    """Who, then what: Postgres' jsonb does not keep the order the tool's schema gave."""
    first = ("visitor_name", "visitor_email", "message")
    return [name for name in first if name in arguments] + sorted(set(arguments) - set(first))


def approval_item(approval: PendingApproval) -> dict:
    args = approval.arguments
    return {
        "id": approval.pk, "action": approval.tool_name, "visitor_name": args.get("visitor_name") or "",
        "visitor_email": args.get("visitor_email") or "", "subject": subject(args),
        "message": args.get("message") or "",
        "origins": [(name.removeprefix("visitor_"), approval.argument_origins.get(name, ""))
                    for name in argument_order(args)],
        "created_at": approval.created_at, "expires_at": approval.expires_at,
        "admin_url": _absolute(reverse("admin:approvals_pendingapproval_change", args=[approval.pk])),
        "approve_url": None, "reject_url": None,  # made when the digest is sent (digest.links)
    }


def unanswered_groups(since: dt.datetime, until: dt.datetime) -> tuple[int, list[dict]]:
    """The period's unanswered questions grouped as the admin groups them (``question_groups``),
    largest first, shortened for an e-mail."""
    total, groups = question_groups(since=since, until=until, open_only=False)
    return total, [{**g, "question": excerpt(g["question"]),
                    "examples": [excerpt(e) for e in g["examples"] if e != g["question"]]}
                   for g in groups[:QUESTION_GROUPS]]


def spend(since: dt.datetime, until: dt.datetime) -> list[dict]:
    """Spend (settled and reserved) against the daily limit for each budget day of the period."""
    limit = settings.TWIN_DAILY_BUDGET_USD
    first, last = timezone.localdate(since), timezone.localdate(until)
    days = []
    day = first
    while day <= last:
        spent = budget_spent(day=day)
        share = int(spent * 100 / limit) if limit else 100
        days.append({"day": day, "spent_usd": spent.quantize(Decimal("0.01")), "limit_usd": limit,
                     "percent": share, "exhausted": spent >= limit, "today": day == last})
        day += dt.timedelta(days=1)
    return days


def incidents(since: dt.datetime, until: dt.datetime) -> list[dict]:
    """Guard incidents of the period, counted per guard and rule, most frequent first."""
    rows = (GuardIncident.objects.filter(created_at__gte=since, created_at__lt=until)
            .values("guard", "rule").annotate(n=Sum("count")).order_by("-n", "guard", "rule"))
    return [{"guard": r["guard"], "rule": r["rule"] or "-", "count": r["n"]} for r in rows]


def feedback(since: dt.datetime, until: dt.datetime) -> dict:
    """Ratings given or changed in the period: counts, and the rows (comments first)."""
    query = Feedback.objects.filter(updated_at__gte=since, updated_at__lt=until)
    counts = query.aggregate(up=Count("pk", filter=Q(rating=1)), down=Count("pk", filter=Q(rating=-1)))
    rows = (query.select_related("message__turn__user_message")
            .order_by("rating", "-updated_at")[:FEEDBACK_ROWS])  # the unhappy ones first
    items = []
    for row in sorted(rows, key=lambda f: (not f.comment, f.rating)):
        turn = getattr(row.message, "turn", None)
        question = turn.user_message.content if turn and turn.user_message else ""
        items.append({"rating": row.rating, "comment": excerpt(row.comment, 300), "question": excerpt(question),
                      "answer": excerpt(row.message.content)})
    return {"up": counts["up"], "down": counts["down"], "items": items}


def flagged_turns(since: dt.datetime, until: dt.datetime) -> tuple[int, list[dict]]:
    """Turns whose answer was flagged: a hallucination risk, or citations that named no known
    source and were removed. Each with a link to its trace in the admin."""
    query = (TurnLog.objects.filter(created_at__gte=since, created_at__lt=until)
             .filter(Q(hallucination_risk=True) | ~Q(unknown_citations=[])))
    total = query.count()
    items = []
    for turn in query.select_related("user_message", "trace").order_by("-created_at")[:FLAGGED_ROWS]:
        trace = getattr(turn, "trace", None)
        items.append({
            "created_at": turn.created_at, "question": excerpt(turn.user_message.content if turn.user_message else ""),
            "hallucination_risk": turn.hallucination_risk,
            "unknown_citations": [excerpt(str(c), 80) for c in turn.unknown_citations or []],
            "trace_url": _absolute(reverse("admin:chat_agenttrace_change", args=[trace.pk])) if trace else None,
        })
    return total, items


UNCITED_MIN_ANSWERS = 20  # fewer answers say too little about a model to recommend anything


def uncited_by_model(since: dt.datetime, until: dt.datetime) -> list[dict]:
    """Per model, its answers in the period (answered or declined turns), how many were flagged
    as long and uncited, how many of those were retracted, how many held a cited sentence its
    source certainly does not say (``unsupported``, knowledge.claims; the visitor saw it marked)
    and how many one the check doubts (``doubtful``, kept from the visitor); ``recommend_retract`` when the
    flagged share reaches ``TWIN_UNCITED_ALERT_SHARE`` over enough answers while the policy is
    still ``log``."""
    rows = (TurnLog.objects.filter(created_at__gte=since, created_at__lt=until,
                                   outcome__in=[TurnLog.Outcome.ANSWERED, TurnLog.Outcome.DECLINED])
            .values("provider", "model")
            .annotate(answers=Count("id"), flagged=Count("id", filter=Q(hallucination_risk=True)),
                      retracted=Count("id", filter=Q(retracted=True)),
                      unsupported=Count("id", filter=Q(unsupported_claims__gt=0)),
                      doubtful=Count("id", filter=Q(doubtful_claims__gt=0)))
            .order_by("-answers", "provider", "model"))
    out = []
    for row in rows:
        share = row["flagged"] / row["answers"]
        out.append(row | {
            "percent": round(share * 100, 1),
            "unsupported_percent": round(row["unsupported"] / row["answers"] * 100, 1),
            "doubtful_percent": round(row["doubtful"] / row["answers"] * 100, 1),
            "recommend_retract": (settings.TWIN_UNCITED == "log" and row["answers"] >= UNCITED_MIN_ANSWERS
                                  and row["flagged"] > 0 and share >= settings.TWIN_UNCITED_ALERT_SHARE),
        })
    return out


def taught_answers(since: dt.datetime, until: dt.datetime) -> list[dict]:
    """Answers the owner (or a colleague) taught or changed in the period, newest first."""
    return list(TaughtAnswer.objects.filter(updated_at__gte=since, updated_at__lt=until)
                .order_by("-updated_at").values("question", "lang", "updated_by", "updated_at")[:50])


def digest_content(*, now: dt.datetime | None = None, since: dt.datetime | None = None) -> dict:
    """Everything the digest says, and whether it says anything (``has_news``)."""
    now = now or timezone.now()
    since = since or digest_period(now)
    approvals = [approval_item(a) for a in pending_approvals()]
    questions_total, questions = unanswered_groups(since, now)
    taught = taught_answers(since, now)
    guard_rows = incidents(since, now)
    ratings = feedback(since, now)
    flagged_total, flagged = flagged_turns(since, now)
    models = uncited_by_model(since, now)
    budget = spend(since, now)
    site = changes_between(settings.TWIN_KNOWLEDGE_DIR, since, now)
    counts = {"approvals": len(approvals), "questions": questions_total,
              "incidents": sum(r["count"] for r in guard_rows), "feedback": ratings["up"] + ratings["down"],
              "flagged": flagged_total, "budget_exhausted": sum(d["exhausted"] for d in budget),
              "taught": len(taught), "site": len(site)}
    return {
        "since": since, "until": now, "owner": settings.TWIN_OWNER_NAME, "site_url": settings.TWIN_SITE_URL,
        "admin_url": _absolute(reverse("admin:index")),
        "approvals": approvals, "questions": questions, "questions_total": questions_total, "taught": taught,
        "incidents": guard_rows, "feedback": ratings, "flagged": flagged, "flagged_total": flagged_total,
        "uncited_models": [m for m in models if m["flagged"] or m["unsupported"] or m["doubtful"]],
        "recommend_retract": [m for m in models if m["recommend_retract"]],
        "alert_percent": round(settings.TWIN_UNCITED_ALERT_SHARE * 100, 1),
        "budget": budget, "counts": counts, "site": site,
        # spend alone is no news; a day that hit the limit is
        "has_news": any(counts.values()),
    }


def told_summary(approval) -> str:
    """How and when the owner was told of ``approval``: one line per channel ("" when not yet).
    Reads ``owner_notice_item__notice__deliveries`` (prefetch it for a list)."""
    item = getattr(approval, "owner_notice_item", None)
    if item is None:
        return ""
    rows = []
    for d in sorted(item.notice.deliveries.all(), key=lambda d: d.channel):
        if d.status == NoticeDelivery.Status.SENT:
            rows.append(f"{d.get_channel_display()}: {timezone.localtime(d.sent_at):%d %b %H:%M}")
        elif d.status == NoticeDelivery.Status.FAILED:
            rows.append(f"{d.get_channel_display()}: failed x{d.attempts} ({d.last_error[:80]})")
        else:
            rows.append(f"{d.get_channel_display()}: {d.get_status_display()}")
    return "; ".join(rows)

"""``/metrics``: Prometheus' text format, computed from the database at each scrape.

Every number is an SQL aggregate over the rows the processes already write (TurnLog,
GuardIncident, BudgetDay, PendingApproval, ContactMessage, the task table), so it is the same
whichever daphne process or worker answers, and survives restarts. An in-process registry
(prometheus-client) would count only what its own process saw: several daphne processes and the
worker would each report a part, and a restart would reset them.

Counters only grow while rows are kept; deleting old turn logs or incidents shows as a counter
reset, which Prometheus' ``rate()`` and ``increase()`` handle.

Protected like the admin API: a bearer token (``TWIN_METRICS_TOKEN``, read-only, or
``TWIN_ADMIN_TOKEN``) compared in constant time, or a logged-in staff user. Without a configured
token anonymous requests get 404; with one, a missing or wrong token gets 401.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.conf import settings
from django.db.models import Count, Min, Q, Sum
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from django_tasks_db.models import DBTaskResult

from approvals.models import ContactMessage, PendingApproval
from budget.models import BudgetDay
from budget.selectors import budget_today
from chat.models import TurnLog
from guards.models import GuardIncident
from ops.access import bearer, staff_may_read, token_matches
from twinsite.api_errors import error_response

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Whole-turn latency: a refusal takes milliseconds, a streamed answer with tool rounds seconds.
LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60)


def _label_value(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: object) -> str:
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float):
        return repr(value) if value != int(value) else str(int(value))
    return str(int(value or 0))


class Exposition:
    """The text format: ``# HELP`` and ``# TYPE`` once per metric, then its samples."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def metric(self, name: str, kind: str, help_text: str,
               samples: Iterable[tuple[dict[str, object], object]], *, suffix: str = "") -> None:
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        self.samples(name + suffix, samples)

    def samples(self, name: str, samples: Iterable[tuple[dict[str, object], object]]) -> None:
        for labels, value in samples:
            rendered = ",".join(f'{key}="{_label_value(val)}"' for key, val in labels.items())
            self.lines.append(f"{name}{{{rendered}}} {_number(value)}" if rendered else f"{name} {_number(value)}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _turns(out: Exposition) -> None:
    by_outcome = TurnLog.objects.values("outcome", "provider").annotate(n=Count("id")).order_by("outcome", "provider")
    out.metric("twinsite_turns", "counter", "Turns recorded, by outcome and provider.",
               (({"outcome": row["outcome"], "provider": row["provider"]}, row["n"]) for row in by_outcome),
               suffix="_total")
    buckets = {f"le_{i}": Count("id", filter=Q(latency_ms__lte=int(bound * 1000)))
               for i, bound in enumerate(LATENCY_BUCKETS_S)}
    totals = TurnLog.objects.aggregate(
        count=Count("id"), latency_total=Sum("latency_ms"), input=Sum("input_tokens"), cached=Sum("cached_tokens"),
        output=Sum("output_tokens"), cost=Sum("cost_usd"), **buckets)
    out.metric("twinsite_turn_tokens", "counter", "Model tokens used by turns (cached input is part of input).",
               (({"kind": kind}, totals[kind]) for kind in ("input", "cached", "output")), suffix="_total")
    out.metric("twinsite_turn_cost_usd", "counter", "Model cost of turns in US dollars.",
               [({}, totals["cost"] or 0)], suffix="_total")
    out.metric("twinsite_turn_latency_seconds", "histogram", "Whole-turn latency, from the question to the answer.",
               [({"le": bound}, totals[f"le_{i}"]) for i, bound in enumerate(LATENCY_BUCKETS_S)]
               + [({"le": "+Inf"}, totals["count"])], suffix="_bucket")
    out.samples("twinsite_turn_latency_seconds_sum", [({}, (totals["latency_total"] or 0) / 1000)])
    out.samples("twinsite_turn_latency_seconds_count", [({}, totals["count"])])


def _guards(out: Exposition) -> None:
    rows = GuardIncident.objects.values("guard").annotate(n=Sum("count")).order_by("guard")
    counts = {row["guard"]: row["n"] for row in rows}
    out.metric("twinsite_refusals", "counter", "Refusals (guard incidents), by guard.",
               (({"guard": guard}, counts.get(guard, 0)) for guard in GuardIncident.Guard.values), suffix="_total")
    verdicts = dict(TurnLog.objects.values_list("screen_verdict").annotate(n=Count("id")).order_by())
    out.metric("twinsite_screen_verdicts", "counter", "Turns by the input screen's verdict (pass: the model; "
               "shield: answered without it; refuse).",
               (({"verdict": verdict}, verdicts.get(verdict, 0)) for verdict in TurnLog.ScreenVerdict.values),
               suffix="_total")
    out.metric("twinsite_shielded", "counter", "Turns the input screen doubted, answered without the model.",
               [({}, verdicts.get(TurnLog.ScreenVerdict.SHIELD, 0))], suffix="_total")


def _budget(out: Exposition) -> None:
    spent = BudgetDay.objects.aggregate(total=Sum("spent_usd"))["total"] or 0
    out.metric("twinsite_spend_usd", "counter", "Model spend charged against the daily budgets (all days), "
               "in US dollars.", [({}, spent)], suffix="_total")
    today = budget_today()
    out.metric("twinsite_budget_today_spent_usd", "gauge", "Today's settled spend in US dollars.",
               [({}, today["spent_usd"])])
    out.metric("twinsite_budget_today_reserved_usd", "gauge", "Today's open reservations in US dollars.",
               [({}, today["reserved_usd"])])
    out.metric("twinsite_budget_daily_limit_usd", "gauge", "The daily budget (TWIN_DAILY_BUDGET_USD).",
               [({}, today["limit_usd"])])
    out.metric("twinsite_budget_exhausted", "gauge", "1 while today's budget is used up (turns are refused).",
               [({}, int(today["exhausted"]))])


def _approvals(out: Exposition) -> None:
    rows = PendingApproval.objects.values("status").annotate(n=Count("id")).order_by("status")
    counts = {row["status"]: row["n"] for row in rows}
    out.metric("twinsite_approvals", "gauge", "Approval requests, by status.",
               (({"status": status}, counts.get(status, 0)) for status in PendingApproval.Status.values))
    out.metric("twinsite_approvals_pending", "gauge", "Approval requests waiting for the owner.",
               [({}, counts.get(PendingApproval.Status.PENDING, 0))])
    oldest = PendingApproval.objects.filter(status=PendingApproval.Status.PENDING).aggregate(at=Min("created_at"))["at"]
    age = (timezone.now() - oldest).total_seconds() if oldest else 0
    out.metric("twinsite_approvals_oldest_pending_seconds", "gauge", "Age of the oldest waiting request (0: none).",
               [({}, round(age, 3))])
    failed = PendingApproval.objects.filter(resume_status=PendingApproval.Resume.FAILED).count()
    out.metric("twinsite_approval_resumes_failed", "gauge", "Decisions whose resume gave up (see the admin).",
               [({}, failed)])
    unsent = ContactMessage.objects.filter(sent_at__isnull=True).count()
    out.metric("twinsite_contact_messages_unsent", "gauge", "Approved contact messages not yet handed to e-mail.",
               [({}, unsent)])


def _tasks(out: Exposition) -> None:
    rows = DBTaskResult.objects.values("status").annotate(n=Count("id")).order_by("status")
    out.metric("twinsite_tasks", "gauge", "Background tasks in the queue table, by status (READY: waiting for "
               "the worker).", (({"status": row["status"]}, row["n"]) for row in rows))


def exposition() -> str:
    out = Exposition()
    out.metric("twinsite_info", "gauge", "The configured provider and model.",
               [({"provider": settings.TWIN_PROVIDER, "model": settings.TWIN_MODEL}, 1)])
    for part in (_turns, _guards, _budget, _approvals, _tasks):
        part(out)
    return out.text()


def _authorised(request: HttpRequest) -> bool | None:
    """True: let in (staff with ``chat.view_trace``, or a token). False: 401. None: 404 (no
    token configured, not such staff)."""
    if staff_may_read(getattr(request, "user", None)):
        return True
    tokens = [t for t in (settings.TWIN_METRICS_TOKEN, settings.TWIN_ADMIN_TOKEN) if t]
    if not tokens:
        return None
    return token_matches(bearer(request), tokens)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    allowed = _authorised(request)
    if allowed is None:
        return error_response(404, "not_found")
    if not allowed:
        response = error_response(401, "unauthorized")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE)
    response["Cache-Control"] = "no-store"
    return response

"""Eval history in the admin: runs with filters, each run's cases with links to their turns'
traces, and a chart of scores over time per suite (server-rendered SVG, no script)."""

from __future__ import annotations

import math

from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from evals.models import EvalCase, EvalRun
from evals.selectors import Point, score_series
from evals.tasks import eval_run_task
from ops.models import Job
from ops.services import JobBusy, job_start
from twinsite.admin_base import ReadOnlyAdmin, ReadOnlyInline

PALETTE = ("#417690", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#2c3e50")


def _trace_link(case: EvalCase) -> str:
    if not case.trace_id:
        return "—"
    return format_html('<a href="{}">trace</a>', reverse("admin:chat_agenttrace_change", args=[case.trace_id]))


class EvalCaseInline(ReadOnlyInline):
    model = EvalCase
    fields = ("case_id", "lang", "question", "passed", "expected_summary", "actual_summary", "trace")

    @admin.display(description="expected")
    def expected_summary(self, obj: EvalCase) -> str:
        return obj.expected.get("summary") or obj.expected

    @admin.display(description="got")
    def actual_summary(self, obj: EvalCase) -> str:
        return obj.actual.get("summary") or obj.actual

    @admin.display(description="trace")
    def trace(self, obj: EvalCase) -> str:
        return _trace_link(obj)


def chart_svg(suite: str, points: list[Point], width: int = 720, height: int = 150) -> SafeString:
    """One suite's scores, oldest to newest, a line per provider, the latest threshold dashed;
    failed runs are hollow red points."""
    if not points:
        return mark_safe("")
    thresholds = [p.threshold for p in points if p.threshold is not None]
    low = min([p.score for p in points] + thresholds[-1:])
    low = max(0.0, math.floor((low - 0.05) * 10) / 10)
    left, right, top, bottom = 36, 8, 18, 20

    def x(index: int) -> float:
        span = max(len(points) - 1, 1)
        return round(left + (width - left - right) * index / span, 1)

    def y(value: float) -> float:
        return round(top + (height - top - bottom) * (1.0 - value) / max(1.0 - low, 0.01), 1)

    providers = list(dict.fromkeys(p.provider for p in points))
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(providers)}
    lines = format_html_join("", '<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>', (
        (colour[name], " ".join(f"{x(i)},{y(p.score)}" for i, p in enumerate(points) if p.provider == name))
        for name in providers))
    dots = format_html_join("", '<circle cx="{}" cy="{}" r="3.5" fill="{}" stroke="{}"><title>run {}: {} {} '
                                '{}</title></circle>', (
        (x(i), y(p.score), colour[p.provider] if p.passed else "#fff", colour[p.provider] if p.passed else "#ba2121",
         p.run_id, p.started_at.strftime("%Y-%m-%d %H:%M"), p.provider or "screen", f"{p.score:.3f}")
        for i, p in enumerate(points)))
    threshold = ""
    if thresholds:
        ty = y(thresholds[-1])
        threshold = format_html('<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#ba2121" stroke-dasharray="4"/>'
                                '<text x="{}" y="{}" font-size="10" fill="#ba2121" text-anchor="end">threshold {}'
                                '</text>', left, width - right, ty, ty, width - right, ty - 3, f"{thresholds[-1]:.2f}")
    legend = format_html_join("", '<text x="{}" y="12" font-size="11" fill="{}">{}</text>', (
        (left + 90 + 110 * i, colour[name], name or "screen") for i, name in enumerate(providers)))
    return format_html(
        '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{suite} scores">'
        '<text x="0" y="12" font-size="12" font-weight="bold">{suite}</text>{legend}'
        '<text x="{lx}" y="{y1}" font-size="10" text-anchor="end">1.0</text>'
        '<text x="{lx}" y="{ylow}" font-size="10" text-anchor="end">{low}</text>'
        '<line x1="{left}" x2="{left}" y1="{top}" y2="{base}" stroke="#999"/>'
        '{threshold}{lines}{dots}'
        '<text x="{left}" y="{h}" font-size="10">{first}</text>'
        '<text x="{w}" y="{h}" font-size="10" text-anchor="end">{last}</text></svg>',
        w=width, h=height, suite=suite, legend=legend, lx=left - 4, y1=y(1.0) + 3, ylow=y(low) + 3, low=f"{low:.1f}",
        left=left, top=top, base=height - bottom, threshold=threshold, lines=lines, dots=dots,
        first=points[0].started_at.strftime("%Y-%m-%d"), last=points[-1].started_at.strftime("%Y-%m-%d"),
    )


@admin.register(EvalRun)
class EvalRunAdmin(ReadOnlyAdmin):
    list_display = ("started_at", "suite", "provider", "model", "score_shown", "threshold", "passed", "cases_shown",
                    "cost_usd", "duration_s", "commit")
    list_filter = ("suite", "provider", "passed", "model")
    date_hierarchy = "started_at"
    readonly_fields = ("suite", "provider", "model", "git_commit", "started_at", "finished_at", "duration_s",
                       "score", "threshold", "passed", "cost_usd", "config", "metrics")
    inlines = [EvalCaseInline]
    change_list_template = "admin/evals/evalrun/change_list.html"
    actions = ["run_again"]

    def has_run_permission(self, request) -> bool:
        return request.user.has_perm("evals.change_evalrun")  # runs cost model calls: not for viewers

    @admin.action(description="Run these suites again (in the background)", permissions=["run"])
    def run_again(self, request, queryset) -> None:
        suites = sorted(set(queryset.values_list("suite", flat=True)))
        providers = set(queryset.values_list("provider", flat=True)) - {""}
        arguments = {"suite": suites[0] if len(suites) == 1 else "all",
                     "provider": "offline" if providers == {"offline"} else ""}
        try:
            job = job_start(kind=Job.Kind.EVAL_RUN, task=eval_run_task, requested_by=request.user.get_username(),
                            arguments=arguments)
        except JobBusy as exc:
            self.message_user(request, f"An eval run is already {exc.job.status if exc.job else 'active'}.",
                              messages.WARNING)
            return
        self.message_user(request, format_html(
            'Eval run of {} ({}) queued: <a href="{}">follow its progress</a>.', arguments["suite"],
            arguments["provider"] or "the configured provider", reverse("admin:ops_job_change", args=[job.pk])),
            messages.SUCCESS)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(
            n_cases=Count("cases"), n_failed=Count("cases", filter=Q(cases__passed=False)))

    @admin.display(description="score", ordering="score")
    def score_shown(self, obj: EvalRun) -> str:
        return "—" if obj.score is None else f"{obj.score:.3f}"

    @admin.display(description="cases (failed)")
    def cases_shown(self, obj: EvalRun) -> str:
        url = reverse("admin:evals_evalcase_changelist") + f"?run__id__exact={obj.pk}&passed__exact=0"
        return format_html('{} (<a href="{}">{} failed</a>)', obj.n_cases, url, obj.n_failed)

    @admin.display(description="commit")
    def commit(self, obj: EvalRun) -> str:
        sha, _, dirty = obj.git_commit.partition("-")
        return sha[:10] + ("+" if dirty else "")

    def changelist_view(self, request, extra_context=None):
        provider = request.GET.get("provider")  # the provider filter's parameter
        charts = [chart_svg(suite, points) for suite, points in score_series(provider=provider).items()]
        return super().changelist_view(request, {**(extra_context or {}), "charts": charts})


@admin.register(EvalCase)
class EvalCaseAdmin(ReadOnlyAdmin):
    list_display = ("case_id", "run", "lang", "passed", "expected_summary", "actual_summary", "trace")
    list_filter = ("passed", "run__suite", "run__provider", "lang", "run")
    search_fields = ("case_id", "question")
    list_select_related = ("run",)
    readonly_fields = ("run", "case_id", "question", "lang", "passed", "expected", "actual", "trace")

    @admin.display(description="expected")
    def expected_summary(self, obj: EvalCase) -> str:
        return obj.expected.get("summary") or ""

    @admin.display(description="got")
    def actual_summary(self, obj: EvalCase) -> str:
        return obj.actual.get("summary") or ""

    @admin.display(description="trace")
    def trace(self, obj: EvalCase) -> str:
        return _trace_link(obj)

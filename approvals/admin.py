"""The owner's approval console. Decisions are buttons and actions that call
``chat.turns.decisions.approval_decide``: never a generic save, never ``queryset.update()``."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponseForbidden, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince
from django.utils.translation import gettext_lazy as _

from approvals import errors, selectors
from approvals.models import ContactMessage, PendingApproval
from chat.selectors import approval_transcript
from chat.turns.decisions import approval_decide
from digest.selectors import told_summary
from twinsite.admin_base import ReadOnlyAdmin

ORIGIN_MARKS = {"typed": _("typed by the visitor"), "model": _("⚠ made by the model"), "empty": _("not given")}


def _can_decide(request: HttpRequest) -> bool:
    return request.user.has_perm("approvals.decide")


@admin.register(PendingApproval)
class PendingApprovalAdmin(ReadOnlyAdmin):
    list_display = ("id", "age", "visitor_name", "visitor_email", "first_line", "origins", "status", "owner_told",
                    "decided_by", "resume_status")
    list_filter = ("status", "resume_status", "tool_name")
    list_display_links = ("id", "first_line")
    search_fields = ("arguments__visitor_name", "arguments__visitor_email", "arguments__message")
    ordering = ("-created_at",)
    date_hierarchy = "created_at"
    actions = ["approve_selected"]
    change_form_template = "admin/approvals/pendingapproval/change_form.html"
    # Who, the message and the decisions are the panel at the top of the page (the template); the
    # record below it keeps the decision's audit, the technical fields folded away.
    fieldsets = (
        (_("Decision"), {"fields": ("status", "conversation", "created_at", "owner_told", "expires_at", "decided_by",
                                    "decided_at", "reason", "arguments_table", "final_arguments_table")}),
        (_("Technical details"), {"classes": ("collapse",), "fields": (
            "tool_name", "tool_call_id", "interrupt_id", "arguments_sha256", "resume_status", "resume_attempts",
            "resume_error", "resumed_at")}),
    )
    readonly_fields = ("status", "conversation", "created_at", "owner_told", "expires_at", "decided_by", "decided_at",
                       "reason", "arguments_table", "final_arguments_table", "tool_name", "tool_call_id",
                       "interrupt_id", "arguments_sha256", "resume_status", "resume_attempts", "resume_error",
                       "resumed_at")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # the audit trail stays

    def get_queryset(self, request):
        return (super().get_queryset(request).select_related("owner_notice_item__notice")
                .prefetch_related("owner_notice_item__notice__deliveries"))

    @admin.display(description=_("owner told"))
    def owner_told(self, obj: PendingApproval) -> str:
        """When and how the owner was told (twinsite.outbox.notices), per channel."""
        return told_summary(obj) or ("not yet" if obj.status == PendingApproval.Status.PENDING else "-")

    def has_decide_permission(self, request) -> bool:
        return _can_decide(request)

    @admin.display(description=_("age"), ordering="created_at")
    def age(self, obj: PendingApproval) -> str:
        return timesince(obj.created_at, timezone.now()).split(",")[0]

    @admin.display(description=_("visitor"))
    def visitor_name(self, obj: PendingApproval) -> str:
        return obj.arguments.get("visitor_name") or "-"

    @admin.display(description=_("e-mail"))
    def visitor_email(self, obj: PendingApproval) -> str:
        return obj.arguments.get("visitor_email") or "-"

    @admin.display(description=_("message"))
    def first_line(self, obj: PendingApproval) -> str:
        lines = [line.strip() for line in str(obj.arguments.get("message") or "").splitlines() if line.strip()]
        first = lines[0] if lines else selectors.subject(obj.arguments) or "-"
        return first if len(first) <= 90 else first[:89] + "…"

    @admin.display(description=_("origins"))
    def origins(self, obj: PendingApproval):
        return format_html_join(" · ", "<span title='{}'>{}: {}</span>", (
            (ORIGIN_MARKS.get(origin, origin), name.removeprefix("visitor_"),
             "⚠ model" if origin == "model" else origin)
            for name, origin in obj.argument_origins.items()))

    @admin.display(description=_("arguments as proposed"))
    def arguments_table(self, obj: PendingApproval):
        """What the model proposed, each with where it came from (the panel shows what will run)."""
        return format_html("<table>{}</table>", format_html_join("", "<tr><th>{}</th><td>{}</td><td>{}</td></tr>", (
            (name, "" if value is None else value, ORIGIN_MARKS.get(obj.argument_origins.get(name, ""), ""))
            for name, value in obj.arguments.items())))

    @admin.display(description="arguments that ran (after the owner's edit)")
    def final_arguments_table(self, obj: PendingApproval):
        if obj.final_arguments is None or obj.final_arguments == obj.arguments:
            return "-" if obj.final_arguments is None else "as proposed"
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>",
                           json.dumps(obj.final_arguments, indent=2, ensure_ascii=False))

    @admin.action(description="Approve the selected requests", permissions=["decide"])
    def approve_selected(self, request, queryset) -> None:
        for approval in queryset.order_by("pk"):
            self._decide(request, approval.pk, "approve")

    def _decide(self, request, approval_id: int, decision: str, reason: str = "", edits: dict | None = None) -> bool:
        try:
            approval = approval_decide(approval_id=approval_id, decision=decision,
                                                actor=request.user.get_username(), reason=reason, edits=edits)
        except errors.ApprovalError as exc:
            self.message_user(request, f"#{approval_id}: {exc.message}", messages.ERROR)
            return False
        self.message_user(request, f"#{approval.pk} {approval.status}. The conversation resumes in the background.",
                          messages.SUCCESS)
        return True

    def get_urls(self):
        return [path("<int:object_id>/decide/", self.admin_site.admin_view(self.decide_view),
                     name="approvals_pendingapproval_decide"), *super().get_urls()]

    def decide_view(self, request, object_id: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not _can_decide(request):
            return HttpResponseForbidden("You may view approvals but not decide them (approvals.decide).")
        decision = request.POST.get("decision", "")
        edits = None
        if decision == "edit":
            approval = PendingApproval.objects.filter(pk=object_id).first()
            proposed = approval.arguments if approval else {}
            posted = {name: request.POST[f"edit_{name}"].replace("\r\n", "\n") for name in proposed
                      if f"edit_{name}" in request.POST}  # browsers send textarea lines with CRLF
            edits = {name: value for name, value in posted.items() if value != (proposed[name] or "")}
            if not edits:
                decision = "approve"  # nothing changed: a plain approval
        self._decide(request, object_id, decision, reason=request.POST.get("reason", ""), edits=edits)
        return HttpResponseRedirect(reverse("admin:approvals_pendingapproval_change", args=[object_id]))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        approval = self.get_object(request, object_id)  # None for an unknown or malformed id
        extra = {"can_decide": _can_decide(request), "approval": approval}
        if approval is not None:
            arguments = approval.final_arguments or approval.arguments
            extra |= {
                "editable": [(name, "" if value is None else value) for name, value in approval.arguments.items()],
                "who": {"name": arguments.get("visitor_name") or "", "email": arguments.get("visitor_email") or ""},
                "message": arguments.get("message") or "",
                "badges": [(name.removeprefix("visitor_"), origin, ORIGIN_MARKS.get(origin, origin))
                           for name, origin in approval.argument_origins.items()],
                "transcript": [{**row, "created_at": timezone.localtime(row["created_at"])}
                               for row in approval_transcript(approval)],
                "edited": approval.final_arguments not in (None, approval.arguments),
            }
        return super().change_view(request, object_id, form_url, extra_context={**(extra_context or {}), **extra})


@admin.register(ContactMessage)
class ContactMessageAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "visitor_name", "visitor_email", "approval", "sent_at", "attempts",
                    "last_error")
    list_filter = ("sent_at",)
    readonly_fields = ("approval", "idempotency_key", "visitor_name", "visitor_email", "body", "sent_at",
                       "attempts", "last_error", "next_attempt_at", "created_at")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
admin.site.index_template = "admin/twinsite_index.html"  # shows the number of waiting approvals

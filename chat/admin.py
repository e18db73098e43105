"""Staff console: conversations, turn logs with cost and latency, the per-turn "why" trace."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Count
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseForbidden,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from chat import lifecycle
from chat.models import (
    AgentTrace,
    CheckpointThread,
    Conversation,
    Feedback,
    Message,
    PromptSnapshot,
    TurnLog,
    UnansweredQuestion,
)
from chat.selectors import open_question_groups, question_before, why_context
from chat.services import questions_put_aside
from ops.access import staff_may_read
from twinsite.admin_base import ReadOnlyAdmin, ReadOnlyInline, group_ids, group_reference, why_link


class TraceDetailAdmin(ReadOnlyAdmin):
    """Traces and prompt snapshots show what the site runs on (its prompt, the model's raw
    answers, what each turn cost): staff holding ``chat.view_trace`` only, not every account
    that may view the table (chat/models.py)."""

    def has_view_permission(self, request, obj=None) -> bool:
        return staff_may_read(request.user) and super().has_view_permission(request, obj)


def _trace_id(message: Message) -> int | None:
    trace = getattr(message, "trace", None)  # select_related: no query per row
    return trace.pk if trace is not None else None


class MessageInline(ReadOnlyInline):
    model = Message
    fields = ("created_at", "role", "content", "citations", "why")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("trace")

    @admin.display(description="why")
    def why(self, obj) -> str:
        return why_link(_trace_id(obj))


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    """Conversations; on a visitor's request, a JSON copy of everything about one (export) and
    its deletion with everything about it (chat.lifecycle: checkpoints, traces, incidents,
    sessions, contact requests, the ledger's links), with the delete permission."""

    list_display = ("id", "title", "visitor_turns", "message_count", "created_at", "updated_at")
    search_fields = ("id", "title")
    date_hierarchy = "created_at"
    inlines = [MessageInline]
    actions = ["export_json", "delete_selected"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_messages=Count("messages"))

    @admin.display(ordering="_messages", description="messages")
    def message_count(self, obj) -> int:
        return obj._messages

    @admin.action(description="Export as JSON (the visitor's copy)", permissions=["view"])
    def export_json(self, request, queryset) -> HttpResponse:
        data = [lifecycle.conversation_export(conversation_id=c.pk) for c in queryset.order_by("created_at")]
        name = f"conversation-{data[0]['conversation']['id']}" if len(data) == 1 else "conversations"
        response = HttpResponse(lifecycle.export_json(data[0] if len(data) == 1 else data),
                                content_type="application/json; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response

    def get_deleted_objects(self, objs, request):
        """The confirmation page lists what goes (counted by the service, checkpoints included)
        and, as "protected", why a conversation cannot go now (a running turn, a contact request
        in motion): Django then refuses the deletion with those reasons."""
        to_delete, counts, protected = [], {}, []
        for conversation in objs:
            reasons = lifecycle.deletion_blockers(conversation)
            protected += [f"{conversation.pk}: {reason}" for reason in reasons]
            report = lifecycle.deletion_preview(conversation)
            to_delete.append(f"Conversation {conversation.pk}")
            for label, value in (("messages", report.messages), ("turn logs", report.turns),
                                 ("traces", report.traces), ("contact requests", report.approvals),
                                 ("guard incidents", report.incidents), ("sessions", report.sessions),
                                 ("ledger entries (unlinked, amounts kept)", report.ledger_unlinked),
                                 ("checkpoint rows", report.checkpoint_rows)):
                counts[label] = counts.get(label, 0) + value
        return to_delete, counts, set(), protected

    def log_deletions(self, request, queryset):
        # The admin log keeps the id only: the title is the visitor's first question.
        return LogEntry.objects.bulk_create([
            LogEntry(user_id=request.user.pk, content_type=ContentType.objects.get_for_model(Conversation),
                     object_id=str(c.pk), object_repr=f"conversation {c.pk}", action_flag=DELETION,
                     change_message="deleted with all its data (chat.lifecycle)")
            for c in queryset])

    def delete_model(self, request, obj) -> None:
        self._delete(request, [obj])

    def delete_queryset(self, request, queryset) -> None:
        self._delete(request, list(queryset))

    def _delete(self, request, conversations) -> None:
        for conversation in conversations:
            try:
                report = lifecycle.conversation_delete(conversation_id=conversation.pk)
            except lifecycle.DeletionRefused as exc:  # changed between the confirmation and now
                self.message_user(request, f"{conversation.pk} not deleted: {exc.reason}", messages.ERROR)
            else:
                self.message_user(request, f"Deleted {report}.", messages.INFO)


class UnsupportedFilter(admin.SimpleListFilter):
    """Turns with a cited sentence their source does not say (knowledge.claims): certainly (the
    visitor saw it marked) or in doubt (kept for the owner)."""

    title = "claims"
    parameter_name = "claims"

    def lookups(self, request, model_admin):
        return [("unsupported", "with a certainly unsupported sentence"), ("doubtful", "with a doubtful sentence"),
                ("supported", "every sentence in its source")]

    def queryset(self, request, queryset):
        if self.value() == "unsupported":
            return queryset.filter(unsupported_claims__gt=0)
        if self.value() == "doubtful":
            return queryset.filter(doubtful_claims__gt=0)
        if self.value() == "supported":
            return queryset.filter(unsupported_claims=0, doubtful_claims=0)
        return queryset


@admin.register(TurnLog)
class TurnLogAdmin(ReadOnlyAdmin):
    # the input screen's verdict beside the outcome: a shielded turn was answered without the model
    # (its reason shown), a refused one is also a guard incident
    list_display = ("created_at", "outcome", "screen_verdict", "shield_reason", "cost_usd", "latency_ms", "question",
                    "provider", "tokens", "tool_rounds", "hallucination_risk", "unsupported_claims", "doubtful_claims",
                    "retracted", "usage_estimated", "why")
    list_filter = ("outcome", "screen_verdict", "provider", "hallucination_risk", UnsupportedFilter, "retracted",
                   "usage_estimated", "created_at")
    # what a turn cost and which model ran it: operational detail, for chat.view_trace (TraceDetailAdmin)
    _OPERATIONAL = ("cost_usd", "provider", "model", "tokens", "input_tokens", "cached_tokens", "output_tokens",
                    "usage_estimated", "node_latency_ms", "state_tokens", "view_tokens")

    def get_list_display(self, request):
        shown = super().get_list_display(request)
        return shown if staff_may_read(request.user) else tuple(f for f in shown if f not in self._OPERATIONAL)

    def get_list_filter(self, request):
        shown = super().get_list_filter(request)
        return shown if staff_may_read(request.user) else tuple(f for f in shown if f not in self._OPERATIONAL)

    def get_fields(self, request, obj=None):
        fields = [f.name for f in TurnLog._meta.fields]
        return fields if staff_may_read(request.user) else [f for f in fields if f not in self._OPERATIONAL]

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)
    search_fields = ("conversation__id", "user_message__content", "assistant_message__content")
    list_select_related = ("trace", "user_message")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in TurnLog._meta.fields]

    @admin.display(description="question")
    def question(self, obj) -> str:
        return obj.user_message.content[:80] if obj.user_message else ""

    @admin.display(description="tokens in / cached / out")
    def tokens(self, obj) -> str:
        return f"{obj.input_tokens} / {obj.cached_tokens} / {obj.output_tokens}"

    @admin.display(description="why")
    def why(self, obj) -> str:
        trace = getattr(obj, "trace", None)
        return why_link(trace.pk if trace is not None else None)


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    """Every message; an answer links to the "why" of its turn."""

    list_display = ("created_at", "role", "content_short", "conversation", "why")
    list_filter = ("role", "created_at")
    search_fields = ("content", "conversation__id")
    list_select_related = ("trace", "conversation")
    date_hierarchy = "created_at"
    fields = ("conversation", "role", "content", "citations", "created_at")
    readonly_fields = fields

    @admin.display(description="content")
    def content_short(self, obj) -> str:
        return obj.content[:100]

    @admin.display(description="why")
    def why(self, obj) -> str:
        return why_link(_trace_id(obj))


@admin.register(AgentTrace)
class AgentTraceAdmin(TraceDetailAdmin):
    list_display = ("created_at", "provider", "model", "question", "input_tokens", "output_tokens",
                    "cost_usd", "has_error")
    list_filter = ("turn__provider", "turn__model", "created_at")
    list_select_related = ("turn__user_message", "message")
    search_fields = ("message__content", "turn__user_message__content")
    date_hierarchy = "created_at"
    # The same readable "why" view as the chat page's staff panel, instead of raw JSON fields.
    fields = ("message", "turn", "created_at")
    readonly_fields = fields
    change_form_template = "admin/chat/agenttrace/change_form.html"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        trace = self.get_object(request, object_id)
        extra = why_context(trace) if trace is not None else {}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    @admin.display(description="question")
    def question(self, obj) -> str:
        return (obj.turn.user_message.content[:80] if obj.turn and obj.turn.user_message else "")

    # What the turn used and cost: its TurnLog's figures (the trace keeps no copies).
    @admin.display(description="provider", ordering="turn__provider")
    def provider(self, obj) -> str:
        return obj.turn.provider if obj.turn else ""

    @admin.display(description="model", ordering="turn__model")
    def model(self, obj) -> str:
        return obj.turn.model if obj.turn else ""

    @admin.display(description="input tokens", ordering="turn__input_tokens")
    def input_tokens(self, obj) -> int | None:
        return obj.turn.input_tokens if obj.turn else None

    @admin.display(description="output tokens", ordering="turn__output_tokens")
    def output_tokens(self, obj) -> int | None:
        return obj.turn.output_tokens if obj.turn else None

    @admin.display(description="cost (USD)", ordering="turn__cost_usd")
    def cost_usd(self, obj):
        return obj.turn.cost_usd if obj.turn else None

    @admin.display(boolean=True, description="error")
    def has_error(self, obj) -> bool:
        return bool(obj.error)






@admin.register(PromptSnapshot)
class PromptSnapshotAdmin(TraceDetailAdmin):
    list_display = ("sha256", "created_at")
    readonly_fields = ("sha256", "text", "created_at")


@admin.register(Feedback)
class FeedbackAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "rating", "message", "comment")
    list_filter = ("rating",)
    list_select_related = ("message__turn__user_message",)  # the teach column's question, no query a row

    def get_list_display(self, request):
        return (*self.list_display, "teach") if can_teach_answers(request) else self.list_display

    @admin.display(description=_("teach"))
    def teach(self, obj: Feedback) -> str:
        """An answer rated "not helpful": the owner may write the better one, for the question asked."""
        if obj.rating >= 0:
            return ""
        if not question_before(obj.message):
            return ""
        # only the reference: the teach form shows the visitor's words as theirs, pre-fills none
        url = reverse("admin:knowledge_taughtanswer_add") + "?" + urlencode({"feedback": obj.pk})
        return format_html('<a class="teach" href="{}">{}</a>', url, _("Teach the answer"))


class HandledFilter(admin.SimpleListFilter):
    title = _("handled")
    parameter_name = "handled"

    def lookups(self, request, model_admin):
        return [("open", _("open")), ("taught", _("taught")), ("dismissed", _("dismissed"))]

    def queryset(self, request, queryset):
        if self.value() == "open":
            return queryset.filter(handled_at__isnull=True)
        if self.value() == "taught":
            return queryset.filter(answered_by__isnull=False)
        if self.value() == "dismissed":
            return queryset.exclude(dismissed_by="")
        return queryset


@admin.register(UnansweredQuestion)
class UnansweredQuestionAdmin(ReadOnlyAdmin):
    """What the knowledge base is missing: similar questions grouped, the largest groups first."""

    list_display = ("created_at", "question", "reason", "handled")
    list_filter = ("reason", HandledFilter)
    search_fields = ("question",)
    exclude = ("embedding",)
    change_list_template = "admin/chat/unansweredquestion/change_list.html"

    @admin.display(description=_("handled"))
    def handled(self, obj: UnansweredQuestion) -> str:
        if obj.answered_by_id:
            return format_html('<a href="{}">{}</a>', reverse("admin:knowledge_taughtanswer_change",
                                                              args=[obj.answered_by_id]), _("taught"))
        return _("dismissed by %(user)s") % {"user": obj.dismissed_by} if obj.dismissed_by else "-"

    def get_urls(self):
        return [path("dismiss/", self.admin_site.admin_view(self.dismiss_view),
                     name="chat_unansweredquestion_dismiss"), *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        # only what is still open: a taught or dismissed question has been dealt with
        groups = open_question_groups()[:30]
        can_teach = can_teach_answers(request)
        for group in groups:
            # only the group's reference: the form shows its wordings as the visitors', pre-fills none
            # signed: the forms act on this group's questions and no other (twinsite.admin_base)
            group["id_list"] = group_reference(group["ids"])
            group["teach_url"] = reverse("admin:knowledge_taughtanswer_add") + "?" + urlencode({
                "questions": group["id_list"]})
        return super().changelist_view(request, {**(extra_context or {}), "groups": groups, "can_teach": can_teach})

    def dismiss_view(self, request: HttpRequest) -> HttpResponse:
        """A group the owner does not want answered: its questions leave the groups, kept in the list."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not can_teach_answers(request):
            return HttpResponseForbidden(_("Dismissing questions needs the permission to teach answers."))
        ids = group_ids(request.POST.get("questions", ""))
        if not ids:  # not a group the list handed out: nothing is put aside
            return HttpResponseBadRequest(_("Dismiss a group from the list of open questions."))
        count = questions_put_aside(ids=ids, by=request.user.get_username())
        self.message_user(request, ngettext("%(count)d question put aside.", "%(count)d questions put aside.",
                                            count) % {"count": count}, messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:chat_unansweredquestion_changelist"))


def can_teach_answers(request: HttpRequest) -> bool:
    """Teaching (and dismissing what not to teach) writes knowledge: the taught answers' add permission."""
    return request.user.has_perm("knowledge.add_taughtanswer")


@admin.register(CheckpointThread)
class CheckpointThreadAdmin(ReadOnlyAdmin):
    """LangGraph threads and their latest checkpoint (read-only view over the library's tables)."""

    list_display = ("thread_id", "checkpoint_id", "checkpoint_count", "step", "source", "pending_interrupts")
    list_filter = ("source",)
    search_fields = ("thread_id",)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

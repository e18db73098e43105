"""The data lifecycle of conversations: the retention purge, export and deletion on request.

A conversation's data is spread over chat's tables (messages, turn logs, traces, feedback,
unanswered questions), LangGraph's checkpoint tables (``thread_id`` = the conversation id;
several rows per graph step, and nothing in LangGraph ever trims them), the visitor's session
(``twin_conversation``), guard incidents, the budget ledger's links and the approvals (requests
and the contact messages they let through). ``conversations_purge`` and ``conversation_delete``
remove all of it together, in batches of one transaction each.

A conversation is only removed while no turn runs in it (its advisory turn lock, taken for the
transaction) and no message can be added (its row is locked, as ``message_create_user`` locks
it), and while none of its contact requests is in motion: a request waiting for the owner's
decision, a decision the worker is still carrying out, or a message not yet e-mailed. The purge
leaves such conversations for a later run; a deletion on request is refused with the reason
(the owner rejects the request first, then deletes).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals import selectors as approval_selectors
from approvals import services as approval_services
from approvals.models import PendingApproval
from budget import services as budget_services
from budget.models import LedgerEntry
from chat.checkpoints import sync_saver_connection
from chat.locks import lock_key
from chat.models import AgentTrace, Conversation, Message, PromptSnapshot, TurnLog, UnansweredQuestion
from chat.services import traces_purge
from chat.turns.admission import SESSION_KEY
from guards import services as guard_services
from guards.models import GuardIncident

# Children first: a purge must not leave writes or blobs whose checkpoint is gone.
CHECKPOINT_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")
PURGE_BATCH = 200


class DeletionRefused(Exception):
    """The conversation cannot be deleted now; ``reason`` says why and what to do."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class PurgeReport:
    conversations: int = 0
    messages: int = 0
    turns: int = 0
    traces: int = 0
    incidents: int = 0
    approvals: int = 0
    ledger_unlinked: int = 0
    sessions: int = 0
    checkpoint_rows: int = 0
    checkpoint_bytes: int = 0
    skipped_busy: int = 0
    skipped_unsettled: int = 0
    expired_sessions: int = 0
    old_incidents: int = 0

    def add(self, other: PurgeReport) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def __str__(self) -> str:
        return (f"{self.conversations} conversations: {self.messages} messages, {self.turns} turns, "
                f"{self.traces} traces, {self.approvals} contact requests, {self.incidents} guard incidents, "
                f"{self.sessions} sessions, {self.ledger_unlinked} ledger entries unlinked; checkpoints: "
                f"{self.checkpoint_rows} rows, {human_bytes(self.checkpoint_bytes)}")


@dataclass
class CheckpointStats:
    """LangGraph's checkpoint tables: rows and bytes (the rows' own sizes, TOAST included)."""

    threads: int = 0
    rows: int = 0
    bytes: int = 0
    turns: int = 0
    disk_bytes: int = 0  # the tables with indexes and free space, as on disk
    per_table: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def bytes_per_turn(self) -> int:
        return self.bytes // self.turns if self.turns else 0

    def __str__(self) -> str:
        tables = ", ".join(f"{name} {rows} rows/{human_bytes(size)}" for name, (rows, size) in self.per_table.items())
        return (f"{self.threads} threads, {self.rows} rows, {human_bytes(self.bytes)} ({tables}); "
                f"{self.turns} turns: {human_bytes(self.bytes_per_turn)} per turn; "
                f"on disk with indexes: {human_bytes(self.disk_bytes)}")


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


# --- reading -------------------------------------------------------------------------------------

def checkpoint_stats(*, conversation_ids: Iterable | None = None) -> CheckpointStats:
    """How much the checkpoints take, in all or for these conversations, and per recorded turn."""
    threads = None if conversation_ids is None else [str(c) for c in conversation_ids]
    where, params = ("", []) if threads is None else (" WHERE thread_id = ANY(%s)", [threads])
    stats = CheckpointStats()
    with connection.cursor() as cursor:
        for table in CHECKPOINT_TABLES:
            cursor.execute(f"SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t{where}", params)
            rows, size = cursor.fetchone()
            stats.per_table[table] = (int(rows), int(size))
            stats.rows += int(rows)
            stats.bytes += int(size)
        cursor.execute(f"SELECT count(DISTINCT thread_id) FROM checkpoints{where}", params)
        stats.threads = int(cursor.fetchone()[0])
        if threads is None:
            cursor.execute("SELECT " + " + ".join(f"pg_total_relation_size('{t}')" for t in CHECKPOINT_TABLES))
            stats.disk_bytes = int(cursor.fetchone()[0])
    turns = TurnLog.objects.all() if threads is None else TurnLog.objects.filter(conversation_id__in=threads)
    stats.turns = turns.count()
    return stats


def idle_conversations(*, before: dt.datetime):
    """Conversations without a message since ``before`` (a conversation without any: since it
    was created), read from the messages themselves: ``updated_at`` moves with the visitor's
    questions only, not with the owner's resumed answers."""
    return Conversation.objects.alias(last=Coalesce(Max("messages__created_at"), "created_at")).filter(
        last__lt=before)


def _sessions_by_conversation() -> dict[str, list[str]]:
    """Live sessions per conversation id they hold (sessions are signed blobs: read each one)."""
    found: dict[str, list[str]] = {}
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        conversation_id = session.get_decoded().get(SESSION_KEY)  # {} when unreadable (another key)
        if conversation_id:
            found.setdefault(str(conversation_id), []).append(session.session_key)
    return found


# --- removing ------------------------------------------------------------------------------------

def _turn_locks(ids: Iterable) -> set:
    """The conversations among ``ids`` with no running turn; their turn locks are held until
    the end of the transaction, so no turn starts in them either (it would answer "busy")."""
    keys = {lock_key(c): c for c in ids}
    if not keys:
        return set()
    with connection.cursor() as cursor:
        cursor.execute("SELECT k FROM unnest(%s::bigint[]) AS k WHERE pg_try_advisory_xact_lock(k)", [list(keys)])
        return {keys[row[0]] for row in cursor.fetchall()}


def _remove(ids: list, sessions: dict[str, list[str]], *, dry_run: bool = False) -> PurgeReport:
    """Everything of these conversations, in the caller's transaction (or only counted)."""
    threads = [str(c) for c in ids]
    stats = checkpoint_stats(conversation_ids=threads)
    session_keys = [key for thread in threads for key in sessions.get(thread, [])]
    report = PurgeReport(
        conversations=len(ids), messages=Message.objects.filter(conversation_id__in=ids).count(),
        turns=TurnLog.objects.filter(conversation_id__in=ids).count(),
        traces=AgentTrace.objects.filter(message__conversation_id__in=ids).count(),
        sessions=len(session_keys), checkpoint_rows=stats.rows, checkpoint_bytes=stats.bytes,
    )
    if dry_run:
        report.incidents = GuardIncident.objects.filter(conversation_id__in=ids).count()
        report.approvals = PendingApproval.objects.filter(conversation_id__in=ids).count()
        report.ledger_unlinked = LedgerEntry.objects.filter(conversation_id__in=ids).count()
        return report
    report.approvals = approval_services.approvals_forget(conversation_ids=ids)
    report.incidents = guard_services.incidents_forget(conversation_ids=ids)
    report.ledger_unlinked = budget_services.ledger_forget(conversation_ids=ids)
    with connection.cursor() as cursor:
        for table in CHECKPOINT_TABLES:
            cursor.execute(f"DELETE FROM {table} WHERE thread_id = ANY(%s)", [threads])
    Session.objects.filter(session_key__in=session_keys).delete()
    # Messages, turn logs, traces, feedback and unanswered questions go by cascade.
    Conversation.objects.filter(pk__in=ids).delete()
    return report


def conversations_purge(*, before: dt.datetime, dry_run: bool = False, batch: int = PURGE_BATCH) -> PurgeReport:
    """Remove conversations idle since ``before`` with all their data, ``batch`` per transaction;
    then expired sessions and guard incidents older than ``before``. ``dry_run`` only counts."""
    report = PurgeReport()
    sessions = _sessions_by_conversation()
    left: set = set()  # skipped (busy or unsettled) or, in a dry run, counted
    while True:
        ids = list(idle_conversations(before=before).exclude(pk__in=left).order_by("created_at")
                   .values_list("pk", flat=True)[:batch])
        if not ids:
            break
        if dry_run:
            left.update(ids)
            blocked = approval_selectors.unsettled_approvals(conversation_ids=ids)
            report.skipped_unsettled += len(blocked)
            report.add(_remove([c for c in ids if str(c) not in blocked], sessions, dry_run=True))
            continue
        with transaction.atomic():
            # skip_locked: a row a visitor's message is being written under is not idle anyway
            locked = set(Conversation.objects.select_for_update(skip_locked=True).filter(pk__in=ids)
                         .values_list("pk", flat=True))
            idle = set(idle_conversations(before=before).filter(pk__in=locked).values_list("pk", flat=True))
            free = _turn_locks(idle)
            blocked = approval_selectors.unsettled_approvals(conversation_ids=list(free))
            doomed = [c for c in free if str(c) not in blocked]
            report.skipped_busy += len(set(ids) - locked) + len(idle - free)
            report.skipped_unsettled += len(free) - len(doomed)
            left.update(set(ids) - set(doomed))
            report.add(_remove(doomed, sessions))
    if dry_run:
        report.expired_sessions = Session.objects.filter(expire_date__lte=timezone.now()).count()
        report.old_incidents = GuardIncident.objects.filter(created_at__lt=before).count()
        return report
    report.expired_sessions = Session.objects.filter(expire_date__lte=timezone.now()).delete()[0]
    report.old_incidents = guard_services.incidents_forget(before=before)
    PromptSnapshot.objects.filter(agenttrace__isnull=True).delete()
    return report


def deletion_blockers(conversation: Conversation) -> list[str]:
    """Why this conversation cannot be deleted now (empty: it can)."""
    reasons = list(approval_selectors.unsettled_approvals(conversation_ids=[conversation.pk]).values())
    with transaction.atomic():
        if not _turn_locks([conversation.pk]):
            reasons.append("a turn of this conversation is running; try again when it has finished")
    return reasons


def deletion_preview(conversation: Conversation) -> PurgeReport:
    """What ``conversation_delete`` would remove (counted, nothing changed)."""
    key = str(conversation.pk)
    return _remove([conversation.pk], {key: _sessions_by_conversation().get(key, [])}, dry_run=True)


@transaction.atomic
def conversation_delete(*, conversation_id: uuid.UUID | str) -> PurgeReport:
    """Delete a conversation and everything about it, on the visitor's request. Raises
    DeletionRefused while a turn runs or a contact request is in motion (see module doc)."""
    conversation = Conversation.objects.select_for_update().filter(pk=conversation_id).first()
    if conversation is None:
        raise Conversation.DoesNotExist(str(conversation_id))
    if not _turn_locks([conversation.pk]):
        raise DeletionRefused("a turn of this conversation is running; try again when it has finished")
    blocked = approval_selectors.unsettled_approvals(conversation_ids=[conversation.pk])
    if blocked:
        raise DeletionRefused(next(iter(blocked.values())))
    sessions = _sessions_by_conversation()
    report = _remove([conversation.pk], {str(conversation.pk): sessions.get(str(conversation.pk), [])})
    PromptSnapshot.objects.filter(agenttrace__isnull=True).delete()
    return report


def retention_purge(*, now: dt.datetime | None = None) -> dict[str, object]:
    """The scheduled purge (the worker, every TWIN_PURGE_INTERVAL): old traces, then idle
    conversations with everything of theirs."""
    now = now or timezone.now()
    traces = traces_purge(before=now - dt.timedelta(days=settings.TWIN_TRACE_RETENTION_DAYS))
    report = conversations_purge(before=now - dt.timedelta(days=settings.TWIN_CONVERSATION_RETENTION_DAYS))
    return {"old_traces": traces, **asdict(report)}


# --- export --------------------------------------------------------------------------------------

class _Encoder(DjangoJSONEncoder):
    def default(self, o: object) -> object:
        try:
            return super().default(o)
        except TypeError:
            return str(o)  # checkpoint values of library types: their text is enough for a person


def _checkpoint_state(thread_id: str) -> dict:
    from langgraph.checkpoint.postgres import PostgresSaver

    with sync_saver_connection() as conn:
        saved = PostgresSaver(conn).get_tuple({"configurable": {"thread_id": thread_id}})
    if saved is None:
        return {}
    return {"checkpoint_id": saved.checkpoint.get("id"), "values": saved.checkpoint.get("channel_values") or {}}


def conversation_export(*, conversation_id: uuid.UUID | str) -> dict:
    """Everything stored about one conversation, as JSON-ready data (the visitor's copy)."""
    conversation = Conversation.objects.get(pk=conversation_id)
    ids = [conversation.pk]
    messages = Message.objects.filter(conversation=conversation).select_related("feedback")
    stats = checkpoint_stats(conversation_ids=ids)
    data = {
        "format": "twinsite-conversation/1",
        "exported_at": timezone.now(),
        "conversation": {"id": conversation.pk, "created_at": conversation.created_at, "title": conversation.title,
                         "language": conversation.language, "visitor_turns": conversation.visitor_turns},
        "messages": [
            {"id": m.pk, "role": m.role, "content": m.content, "citations": m.citations, "created_at": m.created_at,
             "feedback": ({"rating": m.feedback.rating, "comment": m.feedback.comment}
                          if hasattr(m, "feedback") else None)}
            for m in messages
        ],
        "turns": list(TurnLog.objects.filter(conversation=conversation).order_by("created_at").values(
            "id", "user_message_id", "assistant_message_id", "outcome", "provider", "model", "input_tokens",
            "cached_tokens", "output_tokens", "cost_usd", "latency_ms", "tool_rounds", "error_code", "created_at")),
        "traces": list(AgentTrace.objects.filter(message__conversation=conversation).order_by("created_at").values(
            "message_id", "turn_id", "knowledge_sha256", "retrieved", "guard", "tool_calls",
            "provider_responses", "error", "created_at")),
        "unanswered_questions": list(UnansweredQuestion.objects.filter(conversation=conversation).values(
            "question", "reason", "created_at")),
        "contact_requests": [
            {"id": a.pk, "action": a.tool_name, "status": a.status, "arguments": a.arguments,
             "final_arguments": a.final_arguments, "decided_at": a.decided_at, "reason": a.reason,
             "created_at": a.created_at,
             "message": ({"visitor_name": a.contact_message.visitor_name,
                          "visitor_email": a.contact_message.visitor_email, "body": a.contact_message.body,
                          "sent_at": a.contact_message.sent_at} if hasattr(a, "contact_message") else None)}
            for a in PendingApproval.objects.filter(conversation=conversation).select_related("contact_message")
        ],
        "guard_incidents": list(GuardIncident.objects.filter(conversation=conversation).values(
            "guard", "rule", "excerpt", "matched", "view", "created_at")),
        "ledger": list(LedgerEntry.objects.filter(conversation=conversation).values(
            "day", "status", "amount_usd", "note", "created_at")),
        "checkpoints": {"rows": stats.rows, "bytes": stats.bytes, "latest": _checkpoint_state(str(conversation.pk))},
    }
    return json.loads(json.dumps(data, cls=_Encoder))


def export_json(data: dict | list) -> str:
    return json.dumps(data, cls=_Encoder, ensure_ascii=False, indent=2)

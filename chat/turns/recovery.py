"""Turns a dead process left open: found, recorded and made to agree with their checkpoint.

A turn stores the visitor's Message first and its record (assistant Message, TurnLog,
AgentTrace) last; in between, LangGraph writes the thread's checkpoint on its own connection,
once, when the run ends (``chat.checkpoints.DURABILITY``). The record and the checkpoint cannot
share a transaction, so a process killed mid-turn (or one that lost Postgres before it could
record the turn) leaves a user Message without a TurnLog, and a checkpoint either of the turn
before (killed mid-run) or of this turn finished (killed before the record); a checkpoint
stopped mid-run comes from a failed run or from before checkpoints were kept once per run. While a turn
runs, its process holds the conversation's advisory lock (``chat.locks``), which Postgres drops
with the dead process's session: "lock free and a user Message without a TurnLog" is a turn
nobody will finish.

``turns_sweep`` closes each such turn under the conversation's lock (a transaction-level
advisory lock on the same key: no turn starts while it records), comparing with the checkpoint:

- the checkpoint finished this turn (the process died after the graph, before the record):
  the record is written from the checkpoint (answer, citations, outcome), so nothing is lost;
- the checkpoint stopped mid-turn: the checkpoint is closed as an aborted turn would have closed
  it (no answer joins the history, nothing is left to run; a waiting contact request stays
  waiting) and the turn is recorded as aborted;
- the checkpoint never saw the question, or has moved on: the turn is recorded as aborted.

Either way the turn's open budget reservations are charged at once at their worst case (the
provider may have billed the call), and the visitor sees the question followed by "interrupted".
The worker runs the sweep at start and every ``TWIN_WORKER_SWEEP_SECONDS``; ``turn_run`` runs
it for its conversation before each new turn, so a new question never starts on an open one.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from langgraph.checkpoint.postgres import PostgresSaver

from budget import selectors as budget_selectors
from budget import services as budget_services
from chat.agent.graph import build_graph
from chat.agent.recorder import TurnRecorder
from chat.agent.state import Outcome, turn_reset
from chat.checkpoints import sync_saver_connection
from chat.locks import lock_key
from chat.models import Conversation, Message, TurnLog
from chat.texts import text as say
from chat.turns.records import turn_record

log = logging.getLogger(__name__)
# TurnLog.error_code of a turn its process never finished (it died, or Postgres went away)
UNFINISHED = "unfinished"


def _orphans(conversation_id: uuid.UUID | str | None = None):
    answered = TurnLog.objects.filter(user_message=OuterRef("pk"))
    query = Message.objects.filter(role=Message.Role.USER).filter(~Exists(answered))
    if conversation_id is not None:
        query = query.filter(conversation_id=conversation_id)
    return query.order_by("created_at", "pk")


def has_open_turns(conversation_id: uuid.UUID | str) -> bool:
    """Whether a question of this conversation has no turn record (its process died, or its
    turn is still running). ``_orphans(conversation_id).exists()`` as one written statement: it
    runs on every turn, and building the ORM's subquery cost more CPU than Postgres' answer."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT EXISTS (SELECT 1 FROM {Message._meta.db_table} m WHERE m.conversation_id = %s AND m.role = %s "
            f"AND NOT EXISTS (SELECT 1 FROM {TurnLog._meta.db_table} t WHERE t.user_message_id = m.id))",
            [uuid.UUID(str(conversation_id)), Message.Role.USER.value])
        return cursor.fetchone()[0]


def turns_sweep(*, conversation_id: uuid.UUID | str | None = None, lock_held: bool = False) -> dict[str, int]:
    """Record the turns whose process died (all conversations, or one). ``lock_held``: the
    caller holds the conversation's turn lock (``turn_run``). Safe from several processes."""
    counts = {"aborted_turns": 0, "recovered_turns": 0}
    conversations = list(_orphans(conversation_id).values_list("conversation_id", flat=True).distinct())
    for cid in conversations:
        try:
            for kind in _conversation_sweep(cid, lock_held=lock_held):
                counts[kind] += 1
        except Exception:  # one broken thread must not stop the sweep of the others
            log.exception("could not close the open turns of conversation %s", cid)
    return counts


def _conversation_sweep(conversation_id: uuid.UUID, *, lock_held: bool) -> list[str]:
    done: list[str] = []
    with transaction.atomic():
        if not lock_held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [lock_key(conversation_id)])
                if not cursor.fetchone()[0]:
                    return done  # a turn is running: its own process records it
        # Read again under the lock: the turn that held it may just have recorded itself.
        orphans = list(_orphans(conversation_id))
        if not orphans:
            return done
        questions = list(Message.objects.filter(conversation_id=conversation_id, role=Message.Role.USER)
                         .order_by("created_at", "pk").values_list("pk", "created_at"))
        lang = Conversation.objects.filter(pk=conversation_id).values_list("language", flat=True).first() or "en"
        for message in orphans:
            position = [pk for pk, _ in questions].index(message.pk)
            later = questions[position + 1][1] if position + 1 < len(questions) else None
            # Only the conversation's latest question can still be the checkpoint's open turn.
            state = _checkpoint_close(conversation_id, message) if later is None else None
            done.append(_record(conversation_id, message, state, lang, until=later))
    return done


def _checkpoint_close(conversation_id: uuid.UUID, message: Message) -> dict | None:
    """The checkpoint's finished state of this turn, or None after closing it as aborted (or
    leaving it alone when it never saw this question)."""
    config = {"configurable": {"thread_id": str(conversation_id)}}
    question = message.content
    with sync_saver_connection() as conn:
        graph = build_graph().compile(checkpointer=PostgresSaver(conn))
        snapshot = graph.get_state(config)
        values = snapshot.values or {}
        messages = values.get("messages") or []
        last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
        if last is None or messages[last].get("content") != question:
            return None  # the input never reached the checkpoint, or the thread moved on
        if values.get("user_message_id") not in (None, message.pk):
            # The same words asked again: the checkpoint is the earlier turn's, which finished;
            # this one died before its checkpoint (a checkpoint older than the key has none).
            return None
        unfinished = any(not task.interrupts for task in snapshot.tasks)
        if not unfinished and values.get("turn_start") == last and values.get("outcome"):
            return values  # the graph finished; only the record was missing
        if unfinished:
            # As an aborted run ends: the per-turn state of this question, no answer in the
            # history, nothing left to run; routed from verify, so a waiting contact request
            # pauses the thread again (approval_resume handles that).
            graph.update_state(config, turn_reset(turn_start=last, question=question) | {
                "outcome": Outcome.ABORTED.value,
                "error": {"code": UNFINISHED, "message": "the turn was never finished by its process"},
            }, as_node="verify")
        return None


def _record(conversation_id: uuid.UUID, message: Message, state: dict | None, lang: str,
            until: dt.datetime | None) -> str:
    recorder = TurnRecorder(provider=settings.TWIN_PROVIDER, model=settings.TWIN_MODEL)
    # The dead turn's reservations (made after its question, before the next one): charged now
    # at their worst case, linked to its record.
    dead = budget_selectors.open_reservations(conversation_id=conversation_id, since=message.created_at,
                                              until=until)
    if dead:
        budget_services.reservations_expire(entry_ids=dead)
        recorder.ledger_entry_ids = dead
        recorder.cost_usd += budget_selectors.entries_amount(entry_ids=dead)
    if state is not None:
        error = state.get("error") or {}
        recorder.error = "recorded by the sweeper from the finished checkpoint (its process could not record it)"
        turn_record(conversation_id=conversation_id, user_message=message, recorder=recorder, state=state,
                    outcome=state["outcome"], answer=state.get("answer") or "", error_code=error.get("code", ""))
        log.warning("turn of message %s in conversation %s recovered from its checkpoint", message.pk,
                    conversation_id)
        return "recovered_turns"
    recorder.error = "never finished by its process (it stopped, or Postgres went away); closed by the sweeper"
    turn_record(conversation_id=conversation_id, user_message=message, recorder=recorder, state={},
                outcome=Outcome.ABORTED, answer=say("error.aborted", lang), error_code=UNFINISHED)
    log.warning("turn of message %s in conversation %s recorded as aborted (never finished)", message.pk,
                conversation_id)
    return "aborted_turns"

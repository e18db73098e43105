"""Chat services: running a turn through the graph and recording it.

``turn_run`` is the one entry point used by the WebSocket consumer and ``manage.py ask``: it
persists the visitor's message, streams the graph's events to ``emit`` and writes the
assistant message, TurnLog and AgentTrace in one transaction, failed turns included.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.db.models import F
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from approvals import services as approval_services
from approvals.models import PendingApproval
from budget.models import LedgerEntry
from chat.agent.graph import build_graph
from chat.agent.nodes import TurnContext
from chat.agent.trace import TurnRecorder
from chat.checkpoints import async_saver, close_pools
from chat.lang import detect_language
from chat.locks import ConversationBusy, conversation_lock
from chat.models import AgentTrace, Conversation, Message, PromptSnapshot, TurnLog, UnansweredQuestion
from chat.providers import get_provider
from chat.providers.base import Provider
from chat.providers.pricing import round_usd
from chat.recovery import turns_sweep
from chat.scrub import scrub, scrub_text
from chat.texts import text as say
from guards.rules import contains_sensitive, mask_sensitive
from twinsite.db import database_sync_to_async
from twinsite.logs import turn_logged
from twinsite.outage import DATABASE_GONE, database_gone

log = logging.getLogger(__name__)
Emit = Callable[[dict], Awaitable[None]]

class TurnRejected(Exception):
    """A turn refused before anything ran: ``code`` (docs/PROTOCOL.md) and the values its
    sentence needs (``chat.texts``, key ``error.<code>``)."""

    def __init__(self, code: str, **params: object) -> None:
        self.code = code
        self.params = params
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return self.text("en")

    def text(self, lang: str | None) -> str:
        return say(f"error.{self.code}", lang, **self.params)


@dataclass
class TurnResult:
    outcome: str
    answer: str
    message_id: int | None
    turn_id: int | None
    citations: list[dict] = field(default_factory=list)


def ip_hash(ip: str) -> str:
    return hashlib.sha256(f"{settings.SECRET_KEY}:{ip}".encode()).hexdigest() if ip else ""


@transaction.atomic
def conversation_create(*, visitor_ip: str = "") -> Conversation:
    return Conversation.objects.create(visitor_ip_hash=ip_hash(visitor_ip))


@transaction.atomic
def message_create_user(*, conversation_id: uuid.UUID | str, text: str, lang: str = "en") -> Message:
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    if conversation.visitor_turns >= settings.TWIN_MAX_TURNS:
        raise TurnRejected("turn_limit", max=settings.TWIN_MAX_TURNS)
    Conversation.objects.filter(pk=conversation.pk).update(
        visitor_turns=F("visitor_turns") + 1, language=lang, title=conversation.title or text[:120]
    )
    return Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)


@transaction.atomic
def turn_record(*, conversation_id: uuid.UUID | str, user_message: Message | None, recorder: TurnRecorder,
                state: dict, outcome: str, answer: str, error_code: str = "") -> tuple[Message, TurnLog]:
    """Assistant message, TurnLog and AgentTrace, in one transaction."""
    citations = state.get("citations") or []
    message = Message.objects.create(
        conversation_id=conversation_id, role=Message.Role.ASSISTANT, content=answer, citations=citations
    )
    usage = recorder.usage
    cost = round_usd(recorder.cost_usd)
    turn = TurnLog.objects.create(
        conversation_id=conversation_id, user_message=user_message, assistant_message=message,
        outcome=outcome, provider=recorder.provider, model=recorder.model,
        input_tokens=usage.input_tokens, cached_tokens=usage.cached_tokens, output_tokens=usage.output_tokens,
        cost_usd=cost, latency_ms=recorder.elapsed_ms(), node_latency_ms=recorder.node_latency_ms,
        tool_rounds=state.get("tool_rounds") or 0, hallucination_risk=bool(state.get("hallucination_risk")),
        unknown_citations=state.get("unknown_citations") or [], state_tokens=recorder.state_tokens,
        view_tokens=recorder.view_tokens, error_code=error_code,
    )
    prompt = None
    if recorder.system_prompt:
        digest = hashlib.sha256(recorder.system_prompt.encode()).hexdigest()
        # The prompt is the same for most turns: scrub it (~18k characters) only when it is new.
        prompt = PromptSnapshot.objects.filter(sha256=digest).first() or PromptSnapshot.objects.get_or_create(
            sha256=digest, defaults={"text": scrub_text(recorder.system_prompt)})[0]
    AgentTrace.objects.create(
        message=message, turn=turn, provider=recorder.provider, model=recorder.model, system_prompt=prompt,
        knowledge_sha256=recorder.knowledge_sha256, retrieved=scrub(recorder.retrieved),
        guard=scrub({"verdict": state.get("guard"), "semantic": recorder.guard_scores}),
        tool_calls=scrub(recorder.tool_calls), provider_responses=scrub(recorder.provider_responses),
        node_latency_ms=recorder.node_latency_ms, input_tokens=usage.input_tokens,
        cached_tokens=usage.cached_tokens, output_tokens=usage.output_tokens, cost_usd=cost,
        error=scrub_text(recorder.error),
    )
    if recorder.ledger_entry_ids:
        LedgerEntry.objects.filter(pk__in=recorder.ledger_entry_ids).update(turn=turn)
    if outcome == TurnLog.Outcome.DECLINED and user_message is not None:
        UnansweredQuestion.objects.create(
            conversation_id=conversation_id, question=scrub_text(user_message.content), reason="no_source",
            embedding=recorder.question_vector,
        )
    return message, turn


@transaction.atomic
def traces_purge(*, before: dt.datetime, dry_run: bool = False) -> int:
    """Delete traces older than ``before`` and the prompt snapshots no trace uses any more."""
    old = AgentTrace.objects.filter(created_at__lt=before)
    count = old.count()
    if not dry_run:
        old.delete()
        PromptSnapshot.objects.filter(agenttrace__isnull=True).delete()
    return count


# The graph compiled with each loop's checkpointer: compiling costs ~7 ms, once is enough.
_graphs: weakref.WeakKeyDictionary[AsyncPostgresSaver, CompiledStateGraph] = weakref.WeakKeyDictionary()


async def compiled_graph() -> CompiledStateGraph:
    saver = await async_saver()
    graph = _graphs.get(saver)
    if graph is None:
        graph = _graphs[saver] = build_graph().compile(checkpointer=saver)
    return graph


async def turn_run(*, conversation_id: uuid.UUID | str, text: str, emit: Emit,
                   provider: Provider | None = None, visitor_ip: str = "", lang: str = "en") -> TurnResult:
    """Run one visitor turn end to end. Raises TurnRejected before anything runs.

    One turn at a time per conversation, across processes (two tabs, two daphne processes, the
    worker resuming an approval): a Postgres advisory lock held for the whole turn.
    """
    try:
        async with conversation_lock(conversation_id):
            # Card and account numbers never reach a table, the checkpoint or a log: only the
            # guards see the text as typed (through the run's context).
            masked = mask_sensitive(text)
            if contains_sensitive(masked):  # a form the masker missed: keep nothing of it
                masked = "[redacted message]"
            # A turn whose process died is closed first, so this one starts on an agreeing checkpoint.
            await database_sync_to_async(turns_sweep)(conversation_id=conversation_id, lock_held=True)
            user_message = await database_sync_to_async(message_create_user)(
                conversation_id=conversation_id, text=masked, lang=lang)
            return await _run(conversation_id, {"messages": [{"role": "user", "content": masked}]}, emit,
                              provider or get_provider(), user_message=user_message, raw_question=text,
                              visitor_ip_hash=ip_hash(visitor_ip), lang=lang)
    except ConversationBusy:
        raise TurnRejected("busy") from None


async def _run(conversation_id: uuid.UUID | str, graph_input: dict | Command | None, emit: Emit,
               provider: Provider, *, user_message: Message | None, raw_question: str = "",
               visitor_ip_hash: str = "", lang: str = "en") -> TurnResult:
    """Stream one run of the thread (a visitor's turn or a resume) and record it as a turn."""
    recorder = TurnRecorder(provider=provider.name, model=provider.model)
    context = TurnContext(provider=provider, recorder=recorder, conversation_id=str(conversation_id),
                          raw_question=raw_question, visitor_ip_hash=visitor_ip_hash, lang=lang)
    config = {"configurable": {"thread_id": str(conversation_id)}}
    lang = detect_language(user_message.content if user_message else "", lang)

    async def send(event: dict) -> None:
        try:
            await emit(event)
        except Exception:  # the visitor went away; the turn is still recorded
            log.debug("emit failed", exc_info=True)

    interrupts: list = []
    state: dict = {}
    error_code = ""
    try:
        graph = await compiled_graph()
        async for mode, chunk in graph.astream(graph_input, config, context=context,
                                               stream_mode=["custom", "updates"]):
            if mode == "custom":
                await send(chunk)
            elif mode == "updates" and "__interrupt__" in chunk:
                interrupts.extend(chunk["__interrupt__"])
        state = (await graph.aget_state(config)).values
    except Exception as exc:
        log.exception("turn failed in conversation %s", conversation_id)
        recorder.error = recorder.error or f"{type(exc).__name__}: {exc}"
        error_code = "unavailable" if database_gone(exc) else "internal"

    answer = state.get("answer") or ""
    if error_code:
        outcome = TurnLog.Outcome.ERROR
    else:
        outcome = state.get("outcome") or TurnLog.Outcome.ERROR
        if state.get("error"):
            error_code = state["error"]["code"]
    for item in interrupts:
        # The thread paused for the owner: remember the real interrupt id (new after every run).
        await database_sync_to_async(approval_services.approval_record_interrupt)(
            approval_id=item.value["approval_id"], conversation_id=conversation_id, interrupt_id=item.id)
        await send({"type": "approval", "status": "pending", "id": item.id, "action": item.value["action"],
                    "approval_id": item.value["approval_id"]})
    if error_code:
        key = {"aborted": "error.aborted", "unavailable": "error.unavailable"}.get(error_code, "error.failed")
        await send({"type": "error", "code": error_code, "in_turn": True, "message": say(key, lang)})

    try:
        message, turn = await database_sync_to_async(turn_record)(
            conversation_id=conversation_id, user_message=user_message, recorder=recorder, state=state,
            outcome=outcome, answer=answer, error_code=error_code,
        )
    except DATABASE_GONE:
        # Postgres went away: the turn ends for the visitor; its question stays without a record
        # and the sweeper (chat.recovery) records it from the checkpoint once Postgres is back.
        log.warning("turn of conversation %s not recorded: the database is unavailable", conversation_id)
        if error_code != "unavailable":
            await send({"type": "error", "code": "unavailable", "in_turn": True,
                        "message": say("error.unavailable", lang)})
        await send({"type": "done", "outcome": TurnLog.Outcome.ERROR, "message_id": None, "answer": answer,
                    "citations": []})
        return TurnResult(outcome=TurnLog.Outcome.ERROR, answer=answer, message_id=None, turn_id=None)
    await send({
        "type": "trace", "turn_id": turn.pk, "latency_ms": turn.latency_ms,
        "node_latency_ms": recorder.node_latency_ms, "provider": recorder.provider, "model": recorder.model,
        "tokens": {"input": turn.input_tokens, "cached": turn.cached_tokens, "output": turn.output_tokens},
        "cost_usd": str(turn.cost_usd),
    })
    citations = state.get("citations") or []
    done = {"type": "done", "outcome": outcome, "message_id": message.pk, "answer": answer, "citations": citations}
    if outcome == TurnLog.Outcome.REFUSED:  # which stop: the page shows each one its own way
        done["refusal"] = "budget" if state.get("budget_refused") else (state.get("guard") or {}).get("guard", "")
    turn_logged(turn, refusal=done.get("refusal", ""))  # one JSON line (twinsite.turns)
    await send(done)
    return TurnResult(outcome=outcome, answer=answer, message_id=message.pk, turn_id=turn.pk,
                      citations=citations)


# --- resuming a thread with the owner's decision -------------------------------------------------

class ResumeFailed(Exception):
    """The resume did not (yet) take effect; the sweeper retries it."""


class ResumeBusy(ResumeFailed):
    """A turn of the conversation is running; the resume waits for the next sweep."""


def conversation_group(conversation_id: uuid.UUID | str) -> str:
    """The channel-layer group of a conversation's open sockets."""
    return f"conversation.{uuid.UUID(str(conversation_id)).hex}"


def group_emitter(conversation_id: uuid.UUID | str) -> Emit:
    """Push events to every socket of the conversation, in whichever process it is served."""
    layer = get_channel_layer()
    group = conversation_group(conversation_id)

    async def emit(event: dict) -> None:
        await layer.group_send(group, {"type": "chat.event", "event": event})

    return emit


def _waiting_interrupt(snapshot, approval_id: int):
    return next((i for i in snapshot.interrupts
                 if isinstance(i.value, dict) and i.value.get("approval_id") == approval_id), None)


def _resumed(values: dict, approval: PendingApproval) -> bool:
    """The decision reached the thread: the execution call was answered by a tool result."""
    return any(m.get("role") == "tool" and m.get("tool_call_id") == approval.execution_call_id
               for m in values.get("messages") or [])


async def approval_resume(*, approval_id: int, emit: Emit | None = None,
                          provider: Provider | None = None) -> str:
    """Resume the approval's thread with the owner's decision, exactly once.

    Returns ``resumed`` or ``already_done``; raises ResumeFailed when it could not take effect
    (a visitor's turn holds the conversation, or the thread does not wait for this approval).
    Safe to call twice at once or after a crash: under the conversation's lock the thread's
    checkpoint says whether the decision already reached it.
    """
    approval = await database_sync_to_async(approval_services.approval_get)(approval_id=approval_id)
    if approval.status == PendingApproval.Status.PENDING:
        raise ResumeFailed(f"approval {approval_id} is not decided")
    conversation_id = approval.conversation_id
    emit = emit or group_emitter(conversation_id)
    provider = provider or get_provider()
    config = {"configurable": {"thread_id": str(conversation_id)}}
    try:
        async with conversation_lock(conversation_id):
            approval = await database_sync_to_async(approval_services.approval_get)(approval_id=approval_id)
            if approval.status == PendingApproval.Status.APPROVED:
                # The approved action happens first, before the thread hears of it: idempotent and
                # hash-checked, so a crash or a failing tool inside the run cannot lose it.
                await database_sync_to_async(approval_services.contact_message_create)(
                    conversation_id=conversation_id, call_id=approval.execution_call_id,
                    arguments=approval.final_arguments)
            graph = await compiled_graph()
            snapshot = await graph.aget_state(config)
            resumed = _resumed(snapshot.values, approval)
            # This resume's own run died after the decision reached the thread (the tool ran, the
            # visitor was not told yet): it is finished below, not taken as done.
            unfinished = resumed and (snapshot.values.get("resolved") or {}).get("approval_id") == approval.pk \
                and any(not task.interrupts for task in snapshot.tasks)
            if approval.resume_status == PendingApproval.Resume.DONE or (resumed and not unfinished):
                await database_sync_to_async(approval_services.approval_resume_finished)(approval_id=approval_id)
                return "already_done"
            pending = _waiting_interrupt(snapshot, approval.pk)
            if pending is not None:
                graph_input: Command | None = Command(resume={pending.id: approval_services.resume_value(approval)})
            elif unfinished or any(c.get("id") == approval.execution_call_id
                                   for c in snapshot.values.get("pending_calls") or []):
                graph_input = None  # a resume died after the decision reached the thread: finish that run
            elif any(a["approval_id"] == approval.pk for a in snapshot.values.get("awaiting") or []):
                # The run that should have paused died before it did: pause again, then resume.
                await graph.aupdate_state(config, {}, as_node="verify")
                recorder = TurnRecorder(provider=provider.name, model=provider.model)
                context = TurnContext(provider=provider, recorder=recorder, conversation_id=str(conversation_id))
                async for _ in graph.astream(None, config, context=context):
                    pass
                pending = _waiting_interrupt(await graph.aget_state(config), approval.pk)
                if pending is None:
                    raise ResumeFailed(f"thread {conversation_id} could not be paused again")
                graph_input = Command(resume={pending.id: approval_services.resume_value(approval)})
            else:
                # The thread never heard of the request (its run died after the row was written)
                # or moved on: the decision is carried out above; only the chat is not told.
                await database_sync_to_async(approval_services.approval_resume_finished)(
                    approval_id=approval_id, note=f"thread {conversation_id} did not wait for this request; "
                                                  "the decision was carried out without a follow-up in the chat")
                await emit({"type": "approval", "status": approval.status, "approval_id": approval.pk,
                            "action": approval.tool_name})
                return "done_without_thread"
            try:
                await emit({"type": "approval", "status": approval.status, "approval_id": approval.pk,
                            "action": approval.tool_name})
            except Exception:
                log.debug("approval push failed", exc_info=True)
            lang = await database_sync_to_async(
                Conversation.objects.filter(pk=conversation_id).values_list("language", flat=True).first)()
            await _run(conversation_id, graph_input, emit, provider, user_message=None, lang=lang or "en")
            after = await graph.aget_state(config)
            # A resume must check that it took effect: a wrong id interrupts again, silently.
            if _waiting_interrupt(after, approval.pk) is not None or not _resumed(after.values, approval):
                raise ResumeFailed(f"the decision on approval {approval.pk} did not reach the thread")
            await database_sync_to_async(approval_services.approval_resume_finished)(approval_id=approval_id)
            return "resumed"
    except ConversationBusy:
        raise ResumeBusy(f"conversation {conversation_id} is busy; retried later") from None


def approval_resume_sync(*, approval_id: int) -> str:
    """The worker's entry point: one event loop per resume, its pools closed afterwards."""

    async def main() -> str:
        try:
            return await approval_resume(approval_id=approval_id)
        finally:
            await close_pools()

    try:
        return asyncio.run(main())
    except ResumeBusy:
        approval_services.approval_resume_finished(approval_id=approval_id, busy=True)
        return "busy"
    except Exception as exc:
        approval_services.approval_resume_finished(approval_id=approval_id,
                                                   error=scrub_text(f"{type(exc).__name__}: {exc}"))
        raise

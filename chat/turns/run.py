"""Running a turn through the graph: the one entry point of both transports and ``manage.py ask``.

``turn_run`` persists the visitor's (masked) message, streams the graph's events to ``emit``
and records the turn (``chat.turns.records``), failed turns included. ``run_recorded`` is shared with
the resume of an owner's decision (``chat.turns.resume``): one run of the thread, streamed and recorded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from approvals import services as approval_services
from chat.agent.context import TurnContext
from chat.agent.graph import build_graph
from chat.agent.recorder import TurnRecorder
from chat.agent.state import Outcome
from chat.checkpoints import DURABILITY, async_saver
from chat.locks import ConversationBusy, conversation_lock
from chat.models import Message
from chat.providers import get_provider
from chat.providers.base import Provider
from chat.services import TurnRejected, conversation_group, ip_hash, message_create_user
from chat.texts import text as say
from chat.turns.records import turn_logged, turn_record
from chat.turns.recovery import has_open_turns, turns_sweep
from guards.rules import contains_sensitive, mask_sensitive
from knowledge.embedders import turn_query_vectors
from text.language import detect_language
from twinsite.clientip import share_key
from twinsite.db import DATABASE_GONE, database_gone, database_sync_to_async

log = logging.getLogger(__name__)
DEADLINE_GRACE = 15.0  # seconds past TWIN_TURN_DEADLINE before a hung run (not a model call) is stopped
Emit = Callable[[dict], Awaitable[None]]


class RunningTurns:
    """How many visitor turns this process runs now, on any of its loops. Per process by design:
    it guards this process's memory, CPU and connections; each serving process counts its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def take(self, limit: int) -> bool:
        with self._lock:
            if self.count >= limit:
                return False
            self.count += 1
            return True

    def give(self) -> None:
        with self._lock:
            self.count -= 1


running_turns = RunningTurns()
OVERLOADED_RETRY = 10  # seconds a visitor refused for a saturated process is asked to wait


@dataclass
class TurnResult:
    outcome: str
    answer: str
    message_id: int | None
    turn_id: int | None
    citations: list[dict] = field(default_factory=list)


# The graph compiled with each loop's checkpointer: compiling costs ~7 ms, once is enough.
_graphs: weakref.WeakKeyDictionary[AsyncPostgresSaver, CompiledStateGraph] = weakref.WeakKeyDictionary()


async def compiled_graph() -> CompiledStateGraph:
    saver = await async_saver()
    graph = _graphs.get(saver)
    if graph is None:
        graph = _graphs[saver] = build_graph().compile(checkpointer=saver)
    return graph


def group_emitter(conversation_id: uuid.UUID | str) -> Emit:
    """Push events to every socket of the conversation, in whichever process it is served."""
    layer = get_channel_layer()
    group = conversation_group(conversation_id)

    async def emit(event: dict) -> None:
        await layer.group_send(group, {"type": "chat.event", "event": event})

    return emit


async def turn_run(*, conversation_id: uuid.UUID | str, text: str, emit: Emit,
                   provider: Provider | None = None, visitor_ip: str = "", lang: str = "en",
                   slot: str = "") -> TurnResult:
    """Run one visitor turn end to end. Raises TurnRejected before anything runs: ``overloaded``
    when this process already runs ``TWIN_PROCESS_TURNS`` turns, ``busy`` when this conversation
    runs one. ``slot``: the address's running-turn slot (``guards.limits.turn_slot``), freed in
    the turn's record (its ``turn_id`` is then set); the caller frees it otherwise.

    One turn at a time per conversation, across processes (two tabs, two daphne processes, the
    worker resuming an approval): a Postgres advisory lock held for the whole turn.
    """
    if not running_turns.take(settings.TWIN_PROCESS_TURNS):
        # saturated: said at once, not after a wait for a connection or a lock
        log.warning("turn refused: %d turns already run in this process (TWIN_PROCESS_TURNS)", running_turns.count)
        raise TurnRejected("overloaded", seconds=OVERLOADED_RETRY, retry_after=OVERLOADED_RETRY)
    try:
        async with conversation_lock(conversation_id):
            # Card and account numbers never reach a table, the checkpoint or a log: only the
            # guards see the text as typed (through the run's context).
            masked = mask_sensitive(text)
            if contains_sensitive(masked):  # a form the masker missed: keep nothing of it
                masked = "[redacted message]"
            user_message = await database_sync_to_async(_question_recorded)(conversation_id, masked, lang)
            graph_input = {"messages": [{"role": "user", "content": masked}], "user_message_id": user_message.pk}
            return await run_recorded(conversation_id, graph_input, emit,
                                      provider or get_provider(), user_message=user_message, raw_question=text,
                                      visitor_ip_hash=ip_hash(visitor_ip),
                                      budget_ip_hash=ip_hash(share_key(visitor_ip)), lang=lang, slot=slot)
    except ConversationBusy:
        raise TurnRejected("busy") from None
    finally:
        running_turns.give()


def _question_recorded(conversation_id: uuid.UUID | str, text: str, lang: str) -> Message:
    """The visitor's question, stored once a turn of this conversation whose process died is
    closed, so this one starts on an agreeing checkpoint. Under the turn lock; the usual case,
    nothing to close, is one transaction."""
    with transaction.atomic():
        if not has_open_turns(conversation_id):
            return message_create_user(conversation_id=conversation_id, text=text, lang=lang)
    turns_sweep(conversation_id=conversation_id, lock_held=True)
    with transaction.atomic():  # the count and the question together
        return message_create_user(conversation_id=conversation_id, text=text, lang=lang)


@dataclass
class _Run:
    """What one run of the thread left: the final state, the interrupts it paused on, its error."""

    state: dict = field(default_factory=dict)
    interrupts: list = field(default_factory=list)
    error_code: str = ""
    crashed: bool = False  # the run raised: no state to trust

    @property
    def outcome(self) -> str:
        return Outcome.ERROR if self.crashed else (self.state.get("outcome") or Outcome.ERROR)


async def run_recorded(conversation_id: uuid.UUID | str, graph_input: dict | Command | None, emit: Emit,
                       provider: Provider, *, user_message: Message | None, raw_question: str = "",
                       visitor_ip_hash: str = "", budget_ip_hash: str = "", lang: str = "en",
                       slot: str = "") -> TurnResult:
    """Stream one run of the thread (a visitor's turn or a resume) and record it as a turn."""
    recorder = TurnRecorder(provider=provider.name, model=provider.model)
    context = TurnContext(provider=provider, recorder=recorder, conversation_id=str(conversation_id),
                          raw_question=raw_question, visitor_ip_hash=visitor_ip_hash,
                          budget_ip_hash=budget_ip_hash or visitor_ip_hash, lang=lang,
                          deadline=asyncio.get_running_loop().time() + settings.TWIN_TURN_DEADLINE)
    lang = detect_language(user_message.content if user_message else "", lang)

    async def send(event: dict) -> None:
        try:
            await emit(event)
        except Exception:  # the visitor went away; the turn is still recorded
            log.debug("emit failed", exc_info=True)

    run = await _stream(conversation_id, graph_input, context, send)
    await _paused(conversation_id, run, send)
    if run.error_code:
        key = {"aborted": "error.aborted", "unavailable": "error.unavailable",
               "deadline": "error.deadline"}.get(run.error_code, "error.failed")
        await send({"type": "error", "code": run.error_code, "in_turn": True, "message": say(key, lang)})
    return await _recorded(conversation_id, run, recorder, user_message=user_message, send=send, lang=lang,
                           slot=slot)


async def _stream(conversation_id: uuid.UUID | str, graph_input: dict | Command | None, context: TurnContext,
                  send: Emit) -> _Run:
    config = {"configurable": {"thread_id": str(conversation_id)}}
    run = _Run()
    # The model call stops at the deadline by itself (generate); this stops anything else that
    # hangs, a little later, as a crashed run (recorded, the checkpoint left to the sweeper).
    hung = asyncio.timeout(context.timeout(DEADLINE_GRACE))
    try:
        graph = await compiled_graph()
        async with hung:
            final = None
            # "values" gives the state after each step: the last one is what the checkpoint holds,
            # so the state is not read back from Postgres (a transaction and a deserialisation of
            # the whole conversation a turn)
            with turn_query_vectors(context.query_vectors):  # the guard's, for the offline provider
                async for mode, chunk in graph.astream(graph_input, config, context=context, durability=DURABILITY,
                                                       stream_mode=["custom", "updates", "values"]):
                    if mode == "custom":
                        await send(chunk)
                    elif mode == "values":  # at a pause it also carries the interrupts: they come below
                        final = {key: value for key, value in chunk.items() if key != "__interrupt__"}
                    elif mode == "updates" and "__interrupt__" in chunk:
                        run.interrupts.extend(chunk["__interrupt__"])
            run.state = final if final is not None else (await graph.aget_state(config)).values
    except Exception as exc:
        run.crashed = True
        if isinstance(exc, TimeoutError) and hung.expired():
            log.error("turn in conversation %s stopped %g s past its deadline", conversation_id, DEADLINE_GRACE)
            context.recorder.error = context.recorder.error or "deadline: the turn hung past TWIN_TURN_DEADLINE"
            run.error_code = "deadline"
        else:
            log.exception("turn failed in conversation %s", conversation_id)
            context.recorder.error = context.recorder.error or f"{type(exc).__name__}: {exc}"
            run.error_code = "unavailable" if database_gone(exc) else "internal"
    if not run.crashed and run.state.get("error"):
        run.error_code = run.state["error"]["code"]
    return run


async def _paused(conversation_id: uuid.UUID | str, run: _Run, send: Emit) -> None:
    """The thread paused for the owner: remember the real interrupt id (new after every run)."""
    for item in run.interrupts:
        await database_sync_to_async(approval_services.approval_record_interrupt)(
            approval_id=item.value["approval_id"], conversation_id=conversation_id, interrupt_id=item.id)
        await send({"type": "approval", "status": "pending", "id": item.id, "action": item.value["action"],
                    "approval_id": item.value["approval_id"]})


async def _recorded(conversation_id: uuid.UUID | str, run: _Run, recorder: TurnRecorder, *,
                    user_message: Message | None, send: Emit, lang: str, slot: str = "") -> TurnResult:
    answer, outcome, state = run.state.get("answer") or "", run.outcome, run.state
    try:
        message, turn = await database_sync_to_async(turn_record)(
            conversation_id=conversation_id, user_message=user_message, recorder=recorder, state=state,
            outcome=outcome, answer=answer, error_code=run.error_code, slot=slot,
        )
    except DATABASE_GONE:
        # Postgres went away: the turn ends for the visitor; its question stays without a record
        # and the sweeper (chat.turns.recovery) records it from the checkpoint once Postgres is back.
        log.warning("turn of conversation %s not recorded: the database is unavailable", conversation_id)
        if run.error_code != "unavailable":
            await send({"type": "error", "code": "unavailable", "in_turn": True,
                        "message": say("error.unavailable", lang)})
        await send({"type": "done", "outcome": Outcome.ERROR, "message_id": None, "answer": answer,
                    "citations": [], "unsupported": []})
        return TurnResult(outcome=Outcome.ERROR, answer=answer, message_id=None, turn_id=None)
    await send({
        "type": "trace", "turn_id": turn.pk, "latency_ms": turn.latency_ms,
        "node_latency_ms": recorder.node_latency_ms, "provider": recorder.provider, "model": recorder.model,
        "tokens": {"input": turn.input_tokens, "cached": turn.cached_tokens, "output": turn.output_tokens},
        "cost_usd": str(turn.cost_usd),
    })
    citations = state.get("citations") or []
    done = {"type": "done", "outcome": outcome, "message_id": message.pk, "answer": answer, "citations": citations,
            "unsupported": state.get("unsupported") or []}
    if state.get("retracted"):  # the streamed text was withdrawn: ``answer`` replaces it
        done["retracted"] = True
    if outcome == Outcome.REFUSED:  # which stop: the page shows each one its own way
        done["refusal"] = "budget" if state.get("budget_refused") else (state.get("guard") or {}).get("guard", "")
    turn_logged(turn, refusal=done.get("refusal", ""))  # one JSON line (twinsite.turns)
    await send(done)
    return TurnResult(outcome=outcome, answer=answer, message_id=message.pk, turn_id=turn.pk,
                      citations=citations)

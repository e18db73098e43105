"""Chat services: running a turn through the graph and recording it.

``turn_run`` is the one entry point used by the WebSocket consumer and ``manage.py ask``: it
persists the visitor's message, streams the graph's events to ``emit`` and writes the
assistant message, TurnLog and AgentTrace in one transaction, failed turns included.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import F
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph.state import CompiledStateGraph

from budget.models import LedgerEntry
from chat.agent.graph import build_graph
from chat.agent.nodes import TurnContext
from chat.agent.trace import TurnRecorder
from chat.checkpoints import async_saver
from chat.lang import detect_language
from chat.models import AgentTrace, Conversation, Message, PromptSnapshot, TurnLog, UnansweredQuestion
from chat.providers import get_provider
from chat.providers.base import Provider
from chat.providers.pricing import round_usd
from chat.scrub import scrub, scrub_text

log = logging.getLogger(__name__)
Emit = Callable[[dict], Awaitable[None]]

PENDING_TEXT = {
    "en": "I've drafted your message for {owner}. {owner} reviews every message before it is sent; "
          "nothing has been sent yet.",
    "nl": "Ik heb je bericht voor {owner} opgesteld. {owner} bekijkt elk bericht voordat het wordt "
          "verstuurd; er is nog niets verstuurd.",
}


class TurnRejected(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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
def message_create_user(*, conversation_id: uuid.UUID | str, text: str) -> Message:
    conversation = Conversation.objects.select_for_update().get(pk=conversation_id)
    if conversation.visitor_turns >= settings.TWIN_MAX_TURNS:
        raise TurnRejected("turn_limit", f"This conversation reached its limit of {settings.TWIN_MAX_TURNS} "
                                         "questions. Start a new one.")
    Conversation.objects.filter(pk=conversation.pk).update(
        visitor_turns=F("visitor_turns") + 1, title=conversation.title or text[:120]
    )
    return Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)


@transaction.atomic
def turn_record(*, conversation_id: uuid.UUID | str, user_message: Message, recorder: TurnRecorder,
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
        prompt, _ = PromptSnapshot.objects.get_or_create(
            sha256=digest, defaults={"text": scrub_text(recorder.system_prompt)}
        )
    AgentTrace.objects.create(
        message=message, turn=turn, provider=recorder.provider, model=recorder.model, system_prompt=prompt,
        knowledge_sha256=recorder.knowledge_sha256, retrieved=scrub(recorder.retrieved),
        tool_calls=scrub(recorder.tool_calls), provider_responses=scrub(recorder.provider_responses),
        node_latency_ms=recorder.node_latency_ms, input_tokens=usage.input_tokens,
        cached_tokens=usage.cached_tokens, output_tokens=usage.output_tokens, cost_usd=cost,
        error=scrub_text(recorder.error),
    )
    if recorder.ledger_entry_id:
        LedgerEntry.objects.filter(pk=recorder.ledger_entry_id).update(turn=turn)
    if outcome == TurnLog.Outcome.DECLINED:
        UnansweredQuestion.objects.create(
            conversation_id=conversation_id, question=scrub_text(user_message.content), reason="no_source"
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


# Conversations with a turn in progress in this process. Two tabs on one conversation would
# otherwise run the same LangGraph thread twice at once. (One daphne process per site; several
# processes would need a lock in Postgres.)
_RUNNING: set[str] = set()


async def turn_run(*, conversation_id: uuid.UUID | str, text: str, emit: Emit,
                   provider: Provider | None = None) -> TurnResult:
    """Run one visitor turn end to end. Raises TurnRejected before anything runs."""
    key = str(conversation_id)
    if key in _RUNNING:
        raise TurnRejected("busy", "Wait for the current answer to finish.")
    _RUNNING.add(key)
    try:
        return await _turn_run(conversation_id, text, emit, provider or get_provider())
    finally:
        _RUNNING.discard(key)


async def _turn_run(conversation_id: uuid.UUID | str, text: str, emit: Emit, provider: Provider) -> TurnResult:
    user_message = await database_sync_to_async(message_create_user)(conversation_id=conversation_id, text=text)
    recorder = TurnRecorder(provider=provider.name, model=provider.model)
    context = TurnContext(provider=provider, recorder=recorder, conversation_id=str(conversation_id))
    config = {"configurable": {"thread_id": str(conversation_id)}}

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
        async for mode, chunk in graph.astream(
            {"messages": [{"role": "user", "content": text}]}, config, context=context,
            stream_mode=["custom", "updates"],
        ):
            if mode == "custom":
                await send(chunk)
            elif mode == "updates" and "__interrupt__" in chunk:
                interrupts.extend(chunk["__interrupt__"])
        state = (await graph.aget_state(config)).values
    except Exception as exc:
        log.exception("turn failed in conversation %s", conversation_id)
        recorder.error = recorder.error or f"{type(exc).__name__}: {exc}"
        error_code = "internal"

    answer = state.get("answer") or ""
    if error_code:
        outcome = TurnLog.Outcome.ERROR
    elif interrupts:
        outcome = TurnLog.Outcome.APPROVAL_PENDING
        answer = PENDING_TEXT[detect_language(text)].format(owner=settings.TWIN_OWNER_NAME)
        await send({"type": "token", "text": answer})
        for item in interrupts:
            await send({"type": "approval", "status": "pending", "id": item.id,
                        "action": item.value.get("action"), "approval_id": item.value.get("approval_id")})
    else:
        outcome = state.get("outcome") or TurnLog.Outcome.ERROR
        if state.get("error"):
            error_code = state["error"]["code"]
    if error_code:
        await send({"type": "error", "code": error_code, "in_turn": True,
                    "message": "The answer was interrupted; please ask again." if error_code == "aborted"
                    else "Something went wrong; nothing was answered. Please try again."})

    message, turn = await database_sync_to_async(turn_record)(
        conversation_id=conversation_id, user_message=user_message, recorder=recorder, state=state,
        outcome=outcome, answer=answer, error_code=error_code,
    )
    await send({
        "type": "trace", "turn_id": turn.pk, "latency_ms": turn.latency_ms,
        "node_latency_ms": recorder.node_latency_ms, "provider": recorder.provider, "model": recorder.model,
        "tokens": {"input": turn.input_tokens, "cached": turn.cached_tokens, "output": turn.output_tokens},
        "cost_usd": str(turn.cost_usd),
    })
    log.info("turn %s conversation=%s outcome=%s provider=%s tokens=%s/%s/%s cost=%s latency_ms=%s",
             turn.pk, conversation_id, outcome, recorder.provider, turn.input_tokens, turn.cached_tokens,
             turn.output_tokens, turn.cost_usd, turn.latency_ms)
    citations = state.get("citations") or []
    await send({"type": "done", "outcome": outcome, "message_id": message.pk, "answer": answer,
                "citations": citations})
    return TurnResult(outcome=outcome, answer=answer, message_id=message.pk, turn_id=turn.pk,
                      citations=citations)

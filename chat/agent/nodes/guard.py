"""``guard_input`` and ``refuse``: every turn is screened before a single token is spent.

The screen's verdict (``chat.agent.screening.screen_question``): refuse goes to ``refuse``;
shield goes on to ``generate`` with the offline answerer as the turn's provider (no model call,
no budget, the approval flow as the offline answerer has it); pass goes on with the model."""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from budget import selectors as budget_selectors
from chat.agent.context import TurnContext
from chat.agent.screening import screen_question
from chat.agent.state import AgentState, Outcome, turn_reset
from chat.providers import get_provider
from chat.texts import text as say
from guards import services as guard_services
from guards.rules import mask_sensitive
from guards.verdicts import REFUSE, SHIELD
from knowledge.embedders import embed_query_futures, get_embedders
from text.language import detect_language
from twinsite.db import database_sync_to_async, kept_or_read

REFUSAL_KINDS = frozenset({"injection", "card_number", "iban", "off_topic", "budget"})


async def guard_input(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Screen before a single token is spent, and reset the per-turn state."""
    messages = state.get("messages") or []
    turn_start = len(messages) - 1
    question = str(messages[turn_start].get("content") or "") if messages else ""
    reset = turn_reset(turn_start=turn_start, question=question)
    if await kept_or_read(budget_selectors.budget_exhausted_kept, budget_selectors.budget_exhausted_early):
        return reset | {"guard": {"guard": "budget", "rule": "daily_limit"}}
    ctx = runtime.context
    typed = ctx.raw_question or question
    earlier = [str(m.get("content") or "") for m in messages[:turn_start] if m.get("role") == "user"]
    embedder = primary = None
    if typed.strip():
        embedders = get_embedders()
        # The screen needs the primary model's vector only; the others are computed by the search
        # tool if the model searches (a model answering from the prompt's knowledge never pays
        # for them). The offline provider's sentence choice reuses this one (query_vector).
        # Started now, waited for only when the patterns are not certain.
        pending = embed_query_futures(embedders[:1], question)
        ctx.query_vectors[question] = pending
        embedder, primary = embedders[0], pending[embedders[0].name]
    # Patterns and checksums (a few milliseconds on long input), the visitor's last messages
    # together (an instruction split in halves passes each alone), then the semantic screen:
    # off the event loop.
    result, score = await asyncio.to_thread(screen_question, typed, earlier[-2:], embedder,
                                            None if primary is None else primary.result)
    if primary is not None and primary.done() and not primary.exception():
        ctx.recorder.question_vector = [float(x) for x in primary.result()]
    if score is not None:
        ctx.recorder.guard_scores = {"attack": round(score.attack, 4), "benign": round(score.benign, 4),
                                     "margin": round(score.margin, 4), "nearest_attack": score.nearest_attack,
                                     "nearest_benign": score.nearest_benign}
    screened = reset | {"screen": result.as_dict() | {"matched": mask_sensitive(result.matched)}}
    if result.kept_from_model:
        screened["kept_from_model"] = [turn_start]
    if result.verdict == REFUSE:
        return screened | {"guard": {"guard": result.guard, "rule": result.rule, "view": result.view,
                                     "matched": mask_sensitive(result.matched)}}
    if result.verdict == SHIELD and not ctx.provider.offline:
        # answered without the model: the offline answerer for every round of this turn
        ctx.provider = get_provider("offline")
        ctx.recorder.provider, ctx.recorder.model = ctx.provider.name, ctx.provider.model
    return screened


async def refuse(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """A polite refusal is a tested answer, not an error path. No model is called."""
    guard = state["guard"] or {}
    question = state.get("question", "")
    await database_sync_to_async(guard_services.incident_record)(
        guard=guard.get("guard", ""), rule=guard.get("rule", ""), text=question,
        conversation_id=runtime.context.conversation_id, matched=guard.get("matched", ""),
        view=guard.get("view", ""), ip_hash=runtime.context.visitor_ip_hash,
    )
    kind = guard.get("guard", "")
    text = say(f"refuse.{kind}" if kind in REFUSAL_KINDS else "refuse.off_topic",
               detect_language(question, runtime.context.lang))
    runtime.stream_writer({"type": "token", "text": text})
    return {"messages": [{"role": "assistant", "content": text}], "answer": text, "outcome": Outcome.REFUSED.value}

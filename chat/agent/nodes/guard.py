"""``guard_input`` and ``refuse``: every turn is screened before a single token is spent."""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from budget import selectors as budget_selectors
from chat.agent.context import TurnContext
from chat.agent.screening import semantic_verdict
from chat.agent.state import AgentState, Outcome, turn_reset
from chat.texts import text as say
from guards import rules as guard_rules
from guards import services as guard_services
from guards.rules import mask_sensitive
from knowledge.embedders import embed_query_futures, get_embedders
from text.language import detect_language
from twinsite.db import database_sync_to_async

REFUSAL_KINDS = frozenset({"injection", "card_number", "iban", "off_topic", "budget"})


async def guard_input(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Screen before a single token is spent, and reset the per-turn state."""
    messages = state.get("messages") or []
    turn_start = len(messages) - 1
    question = str(messages[turn_start].get("content") or "") if messages else ""
    reset = turn_reset(turn_start=turn_start, question=question)
    if await database_sync_to_async(budget_selectors.budget_exhausted_early)():
        return reset | {"guard": {"guard": "budget", "rule": "daily_limit"}}
    ctx = runtime.context
    typed = ctx.raw_question or question
    # Patterns and checksums: a few milliseconds on long input, so off the event loop. Then the
    # visitor's last messages together: an instruction split in halves passes each alone.
    verdict = await asyncio.to_thread(guard_rules.screen, typed)
    if verdict is None:
        earlier = [str(m.get("content") or "") for m in messages[:turn_start] if m.get("role") == "user"]
        verdict = await asyncio.to_thread(guard_rules.screen_turns, [*earlier[-2:], typed])
    if verdict is None and typed.strip():
        embedders = get_embedders()
        # The screen needs the primary model's vector only; the others are computed by the search
        # tool if the model searches (a model answering from the prompt's knowledge never pays
        # for them). The offline provider's sentence choice reuses this one (query_vector).
        pending = embed_query_futures(embedders[:1], question)
        ctx.query_vectors[question] = pending
        primary = await asyncio.wrap_future(pending[embedders[0].name])
        ctx.recorder.question_vector = [float(x) for x in primary]
        verdict, score = await asyncio.to_thread(semantic_verdict, embedders[0], primary, typed)
        if score is not None:
            ctx.recorder.guard_scores = {"attack": round(score.attack, 4), "benign": round(score.benign, 4),
                                         "margin": round(score.margin, 4), "nearest_attack": score.nearest_attack,
                                         "nearest_benign": score.nearest_benign}
    if verdict is not None:
        return reset | {"guard": {"guard": verdict.guard, "rule": verdict.rule, "view": verdict.view,
                                  "matched": mask_sensitive(verdict.matched)}}
    return reset


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

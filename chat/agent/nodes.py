"""The six nodes. Only ``generate`` talks to a model; the rest is deterministic Python that
fails closed."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Literal

from channels.db import database_sync_to_async
from django.conf import settings
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from approvals import services as approval_services
from budget import services as budget_services
from chat.agent import context as view
from chat.agent.prompts import system_prompt
from chat.agent.state import AgentState
from chat.agent.tools import TOOLS, ToolContext, is_high_risk, tool_schemas
from chat.agent.trace import TurnRecorder
from chat.citations import cited_titles, strip_citations
from chat.lang import detect_language
from chat.providers import pricing
from chat.providers.base import ChatRequest, Provider, ProviderError
from guards import rules as guard_rules
from guards import services as guard_services
from knowledge import selectors as knowledge

log = logging.getLogger(__name__)


@dataclass
class TurnContext:
    """Run dependencies (LangGraph runtime context): not checkpointed."""

    provider: Provider
    recorder: TurnRecorder
    conversation_id: str


REFUSALS = {
    "en": {
        "injection": "I can only answer questions about {owner}'s work, and I won't change how I work. "
                     "What would you like to know about {owner}?",
        "card_number": "Please don't share card numbers here; I have not stored it. "
                       "Ask me about {owner}'s work instead.",
        "iban": "Please don't share bank account numbers here; I have not stored it. "
                "Ask me about {owner}'s work instead.",
        "off_topic": "I'm {owner}'s digital twin: I answer questions about {owner}'s work, projects and "
                     "availability, not other tasks. Ask {owner} directly for anything else.",
        "budget": "I've reached today's limit for answering questions. Please come back tomorrow, "
                  "or ask me to pass a message to {owner}.",
    },
    "nl": {
        "injection": "Ik beantwoord alleen vragen over het werk van {owner}, en ik verander mijn werkwijze niet. "
                     "Wat wil je weten over {owner}?",
        "card_number": "Deel hier alsjeblieft geen kaartnummers; ik heb het niet bewaard. "
                       "Vraag me liever iets over het werk van {owner}.",
        "iban": "Deel hier alsjeblieft geen rekeningnummers; ik heb het niet bewaard. "
                "Vraag me liever iets over het werk van {owner}.",
        "off_topic": "Ik ben de digitale tweeling van {owner}: ik beantwoord vragen over het werk, de projecten "
                     "en de beschikbaarheid van {owner}, geen andere taken.",
        "budget": "Het dagbudget voor vragen is op. Kom morgen terug, of vraag me een bericht aan {owner} "
                  "door te geven.",
    },
}


# --- guard_input ------------------------------------------------------------------------------

async def guard_input(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Screen before a single token is spent, and reset the per-turn state."""
    messages = state.get("messages") or []
    turn_start = len(messages) - 1
    question = str(messages[turn_start].get("content") or "") if messages else ""
    reset = {
        "turn_start": turn_start, "question": question, "guard": None, "tool_rounds": 0,
        "pending_calls": [], "approved_call_ids": [], "answer": "",
        "citations": [], "unknown_citations": [], "hallucination_risk": False, "outcome": "", "error": None,
    }
    if await database_sync_to_async(budget_services.budget_exhausted)():
        return reset | {"guard": {"guard": "budget", "rule": "daily_limit"}}
    verdict = guard_rules.screen(question)
    if verdict is not None:
        return reset | {"guard": {"guard": verdict.guard, "rule": verdict.rule}}
    return reset


def route_after_guard(state: AgentState) -> Literal["refuse", "generate"]:
    return "refuse" if state.get("guard") else "generate"


# --- refuse -------------------------------------------------------------------------------------

async def refuse(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """A polite refusal is a tested answer, not an error path. No model is called."""
    guard = state["guard"] or {}
    question = state.get("question", "")
    await database_sync_to_async(guard_services.incident_record)(
        guard=guard.get("guard", ""), rule=guard.get("rule", ""), text=question,
        conversation_id=runtime.context.conversation_id,
    )
    text = REFUSALS[detect_language(question)].get(guard.get("guard", ""), REFUSALS["en"]["off_topic"])
    text = text.format(owner=settings.TWIN_OWNER_NAME)
    runtime.stream_writer({"type": "token", "text": text})
    return {"messages": [{"role": "assistant", "content": text}], "answer": text, "outcome": "refused"}


# --- generate -----------------------------------------------------------------------------------

async def generate(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """The only node that calls a model. Streams tokens to the visitor as they arrive."""
    ctx = runtime.context
    recorder = ctx.recorder
    prefix, prefix_sha = await database_sync_to_async(knowledge.knowledge_prefix)()
    system = system_prompt(settings.TWIN_OWNER_NAME, prefix)
    recorder.system_prompt, recorder.knowledge_sha256 = system, prefix_sha
    messages = state.get("messages") or []
    prompt = view.build_view(
        system=system, messages=messages, turn_start=state.get("turn_start", 0),
        history_tokens=settings.TWIN_HISTORY_TOKENS, tool_result_chars=settings.TWIN_TOOL_RESULT_VIEW_CHARS,
    )
    recorder.state_tokens = view.approx_tokens(system) + view.approx_tokens(messages)
    recorder.view_tokens = view.approx_tokens(prompt)
    rounds = state.get("tool_rounds", 0)
    request = ChatRequest(
        messages=prompt,
        tools=tool_schemas(),
        # After the round limit the model must answer in text, however hard it insists.
        tool_choice="none" if rounds >= settings.TWIN_MAX_TOOL_ROUNDS else "auto",
        max_tokens=settings.TWIN_MAX_OUTPUT_TOKENS,
    )

    def on_token(text: str) -> None:
        recorder.tokens_forwarded = True
        runtime.stream_writer({"type": "token", "text": text})

    provider = ctx.provider
    try:
        result = await provider.complete(request, on_token)
    except ProviderError as exc:
        partial = exc.partial
        if partial is not None:
            _account(recorder, provider, partial.usage, partial.raw, exc.code)
        code = "aborted" if exc.forwarded or recorder.tokens_forwarded else "provider_error"
        recorder.error = f"{exc.code}: {exc.message}"
        log.warning("provider %s failed (%s): %s", provider.name, code, exc)
        return {"error": {"code": code, "message": exc.message, "provider_code": exc.code},
                "outcome": "aborted" if code == "aborted" else "error",
                "answer": partial.text if partial else "", "pending_calls": []}
    _account(recorder, provider, result.usage, result.raw, result.finish_reason or "")

    calls = [call.as_message() for call in result.tool_calls]
    if request.tool_choice == "none":
        calls = []  # a provider that ignores tool_choice does not get another round
    text = result.text
    if not text and not calls and result.refusal:
        text = result.refusal
        on_token(text)
    update: dict = {"pending_calls": calls, "answer": text}
    if calls:
        # The tool exchange is history; a text answer is appended by verify, once checked.
        update["messages"] = [{"role": "assistant", "content": text or None, "tool_calls": calls}]
    return update


def _account(recorder: TurnRecorder, provider: Provider, usage, raw: list, finish: str) -> None:
    recorder.usage = recorder.usage + usage
    recorder.cost_usd += pricing.cost_usd(provider.name, provider.model, usage)
    recorder.provider_responses.append({
        "finish": finish, "usage": vars(usage).copy(), "chunks": list(raw)[:200],
    })


def route_after_generate(state: AgentState) -> Literal["execute_tools", "request_approval", "verify"]:
    calls = state.get("pending_calls") or []
    if state.get("error") or not calls:
        return "verify"
    approved = set(state.get("approved_call_ids") or [])
    if any(is_high_risk(c["function"]["name"]) and c["id"] not in approved for c in calls):
        return "request_approval"
    return "execute_tools"


# --- execute_tools ------------------------------------------------------------------------------

async def execute_tools(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Run the pending calls: parse, validate, enforce risk, time out; never crash the turn."""
    ctx = runtime.context
    approved = set(state.get("approved_call_ids") or [])
    results: list[dict] = []
    for call in state.get("pending_calls") or []:
        name, call_id = call["function"]["name"], call["id"]
        runtime.stream_writer({"type": "tool", "name": name, "status": "started"})
        payload, status = await _run_tool(name, call_id, call["function"]["arguments"], approved, ctx)
        runtime.stream_writer({"type": "tool", "name": name, "status": status})
        ctx.recorder.tool_calls.append({
            "id": call_id, "name": name, "arguments": call["function"]["arguments"],
            "status": status, "result": payload,
        })
        results.append({"role": "tool", "tool_call_id": call_id,
                        "content": json.dumps(payload, ensure_ascii=False)})
    return {"messages": results, "pending_calls": [], "tool_rounds": state.get("tool_rounds", 0) + 1}


async def _run_tool(name: str, call_id: str, raw_args: str, approved: set[str],
                    ctx: TurnContext) -> tuple[dict, str]:
    tool = TOOLS.get(name)
    if tool is None:
        return {"error": f"unknown tool {name!r}; available: {', '.join(TOOLS)}"}, "error"
    if tool.risk == "high" and call_id not in approved:
        # Enforced here too, not only by routing: a high-risk tool never runs unapproved.
        return {"error": "refused: this action needs the owner's approval first"}, "refused"
    try:
        args = tool.parse(raw_args)
    except ValueError as exc:
        return {"error": str(exc)}, "invalid"
    tool_ctx = ToolContext(conversation_id=ctx.conversation_id, tool_call_id=call_id)
    try:
        payload = await asyncio.wait_for(tool.run(args, tool_ctx), timeout=tool.timeout)
    except TimeoutError:
        return {"error": f"{name} timed out after {tool.timeout:g}s"}, "error"
    except approval_services.NotApproved as exc:
        return {"error": f"refused: {exc}"}, "refused"
    except Exception as exc:  # a failing tool returns an error result instead of crashing the turn
        log.exception("tool %s failed", name)
        return {"error": f"{name} failed: {type(exc).__name__}"}, "error"
    finally:
        ctx.recorder.retrieved.extend(tool_ctx.retrieved)
    return payload, "ok"


# --- request_approval ---------------------------------------------------------------------------

async def request_approval(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Pause the thread until the owner decides. Everything before ``interrupt()`` runs again
    on resume, so it must be idempotent."""
    call = next(c for c in state.get("pending_calls") or [] if is_high_risk(c["function"]["name"]))
    try:
        arguments = json.loads(call["function"]["arguments"] or "{}")
    except json.JSONDecodeError:
        arguments = {"raw": call["function"]["arguments"]}
    approval = await database_sync_to_async(approval_services.approval_request)(
        conversation_id=runtime.context.conversation_id, tool_call_id=call["id"],
        tool_name=call["function"]["name"], arguments=arguments,
    )
    decision = interrupt({
        "action": call["function"]["name"],
        "tool_call_id": call["id"],
        "approval_id": approval.pk,
        "arguments": arguments,
        "allowed_decisions": ["approve", "reject"],
    })
    if isinstance(decision, dict) and decision.get("decision") == "approve":
        return {"approved_call_ids": [*state.get("approved_call_ids", []), call["id"]]}
    rejected = {"role": "tool", "tool_call_id": call["id"],
                "content": json.dumps({"error": "the owner declined to send this message"})}
    others = [c for c in state.get("pending_calls") or [] if c["id"] != call["id"]]
    return {"messages": [rejected], "pending_calls": others}


def _succeeded(tool_message: dict) -> bool:
    """A tool result without an error (a search that merely quotes the word "error" counts)."""
    try:
        payload = json.loads(tool_message.get("content") or "{}")
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and "error" not in payload


def route_after_approval(state: AgentState) -> Literal["execute_tools", "generate"]:
    return "execute_tools" if state.get("pending_calls") else "generate"


# --- verify -------------------------------------------------------------------------------------

async def verify(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Check citations against the knowledge base, flag ungrounded answers, settle the cost."""
    recorder = runtime.context.recorder
    answer = state.get("answer") or ""
    known = await database_sync_to_async(knowledge.document_urls)()
    cited = cited_titles(answer)
    unknown = [t for t in cited if t not in known]
    if unknown:
        answer = strip_citations(answer, set(unknown))
    citations = [{"title": t, "url": known[t]} for t in cited if t in known]
    turn_messages = (state.get("messages") or [])[state.get("turn_start", 0):]
    used_tools = any(m.get("role") == "tool" and _succeeded(m) for m in turn_messages)
    long_answer = len(answer) >= settings.TWIN_GROUNDEDNESS_CHARS
    # Flagged for review, not blocked: "I don't know that" has no citation either.
    risky = long_answer and not citations and not used_tools
    if state.get("error"):
        outcome = state.get("outcome") or "error"
    elif citations or long_answer:
        outcome = "answered"
    else:
        outcome = "declined"  # a short answer without a source: the twin said it does not know
    if citations:
        runtime.stream_writer({"type": "citations", "citations": citations})
    if recorder.cost_usd > 0:
        entry = await database_sync_to_async(budget_services.budget_charge)(
            amount_usd=pricing.round_usd(recorder.cost_usd), note=f"conversation {runtime.context.conversation_id}"
        )
        recorder.ledger_entry_id = entry.pk
    update: dict = {"answer": answer, "citations": citations, "unknown_citations": unknown,
                    "hallucination_risk": risky, "outcome": outcome}
    if not state.get("error") and answer:
        # the answer as the visitor keeps it (unknown citations removed) becomes history
        update["messages"] = [{"role": "assistant", "content": answer}]
    return update

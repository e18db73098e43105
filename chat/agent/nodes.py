"""The six nodes. Only ``generate`` talks to a model; the rest is deterministic Python that
fails closed."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from django.conf import settings
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from approvals import services as approval_services
from budget import services as budget_services
from chat.agent import context as view
from chat.agent.prompts import system_prompt
from chat.agent.screening import semantic_verdict
from chat.agent.state import AgentState
from chat.agent.tools import TOOLS, ToolContext, is_high_risk, tool_schemas
from chat.agent.trace import TurnRecorder
from chat.citations import cited_titles, strip_citations
from chat.lang import detect_language
from chat.providers import pricing
from chat.providers.base import ChatRequest, Provider, ProviderError
from chat.texts import text as say
from guards import rules as guard_rules
from guards import services as guard_services
from guards.rules import mask_sensitive
from knowledge import selectors as knowledge
from knowledge.embedders import embed_query_futures, get_embedders
from knowledge.prefix import knowledge_prefix
from twinsite.db import database_sync_to_async

log = logging.getLogger(__name__)


@dataclass
class TurnContext:
    """Run dependencies (LangGraph runtime context): not checkpointed."""

    provider: Provider
    recorder: TurnRecorder
    conversation_id: str
    # The visitor's words as typed, for the guards only: the state and every table keep the
    # masked form (card and account numbers redacted). Never stored.
    raw_question: str = ""
    visitor_ip_hash: str = ""
    # The question's embeddings as futures per model (question -> {model: Future}), started once
    # by the guard and awaited by the search tool when it searches for the question itself.
    query_vectors: dict = field(default_factory=dict)
    # The visitor's page language: the twin's own sentences follow the question's language, and
    # this one when the question does not tell (a name, a number, a resume by the owner).
    lang: str = "en"


def turn_reset(*, turn_start: int, question: str) -> dict:
    """The per-turn state at the start of a turn: a visitor's question or the owner's decision."""
    return {
        "turn_start": turn_start, "question": question, "guard": None, "tool_rounds": 0,
        "pending_calls": [], "approved_call_ids": [], "answer": "",
        "citations": [], "unknown_citations": [], "hallucination_risk": False, "outcome": "", "error": None,
        "queued_approval_id": None, "resolved": None, "budget_refused": None,
    }


REFUSAL_KINDS = frozenset({"injection", "card_number", "iban", "off_topic", "budget"})


# --- guard_input ------------------------------------------------------------------------------

async def guard_input(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Screen before a single token is spent, and reset the per-turn state."""
    messages = state.get("messages") or []
    turn_start = len(messages) - 1
    question = str(messages[turn_start].get("content") or "") if messages else ""
    reset = turn_reset(turn_start=turn_start, question=question)
    if await database_sync_to_async(budget_services.budget_exhausted)():
        return reset | {"guard": {"guard": "budget", "rule": "daily_limit"}}
    ctx = runtime.context
    typed = ctx.raw_question or question
    # Patterns and checksums: a few milliseconds on long input, so off the event loop.
    verdict = await asyncio.to_thread(guard_rules.screen, typed)
    if verdict is None and typed.strip():
        embedders = get_embedders()
        # The screen needs the primary model's vector only; the others are computed by the search
        # tool if the model searches (a model answering from the prompt's knowledge never pays
        # for them: the second model is most of the CPU of a turn).
        pending = embed_query_futures(embedders[:1], question)
        ctx.query_vectors[question] = pending
        primary = await asyncio.wrap_future(pending[embedders[0].name])
        ctx.recorder.question_vector = [float(x) for x in primary]
        verdict, score = await asyncio.to_thread(semantic_verdict, embedders[0], primary)
        if score is not None:
            ctx.recorder.guard_scores = {"attack": round(score.attack, 4), "benign": round(score.benign, 4),
                                         "margin": round(score.margin, 4), "nearest_attack": score.nearest_attack,
                                         "nearest_benign": score.nearest_benign}
    if verdict is not None:
        return reset | {"guard": {"guard": verdict.guard, "rule": verdict.rule, "view": verdict.view,
                                  "matched": mask_sensitive(verdict.matched)}}
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
        conversation_id=runtime.context.conversation_id, matched=guard.get("matched", ""),
        view=guard.get("view", ""), ip_hash=runtime.context.visitor_ip_hash,
    )
    kind = guard.get("guard", "")
    text = say(f"refuse.{kind}" if kind in REFUSAL_KINDS else "refuse.off_topic",
               detect_language(question, runtime.context.lang))
    runtime.stream_writer({"type": "token", "text": text})
    return {"messages": [{"role": "assistant", "content": text}], "answer": text, "outcome": "refused"}


# --- generate -----------------------------------------------------------------------------------

async def generate(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """The only node that calls a model. Streams tokens to the visitor as they arrive."""
    ctx = runtime.context
    recorder = ctx.recorder
    prefix, prefix_sha = await database_sync_to_async(knowledge_prefix)()
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
    # The budget: reserve this call's worst case atomically with the check, settle to the real
    # cost afterwards, whatever happens to the call (retries, errors, aborts, approvals).
    worst_case = pricing.worst_case_usd(provider.name, provider.model, prompt, request.tools, request.max_tokens)
    entry_id: int | None = None
    if worst_case > 0:
        try:
            entry = await database_sync_to_async(budget_services.budget_reserve)(
                amount_usd=worst_case, conversation_id=ctx.conversation_id, ip_hash=ctx.visitor_ip_hash,
                note=f"{provider.name}/{provider.model}")
        except budget_services.BudgetRefused as refused:
            text = say("refuse.budget", detect_language(state.get("question") or "", ctx.lang))
            runtime.stream_writer({"type": "token", "text": text})
            await database_sync_to_async(guard_services.incident_record)(
                guard="budget", rule=refused.reason, text=state.get("question") or "",
                conversation_id=ctx.conversation_id, ip_hash=ctx.visitor_ip_hash)
            return {"answer": text, "pending_calls": [], "budget_refused": refused.reason}
        entry_id = entry.pk
        recorder.ledger_entry_ids.append(entry_id)
    try:
        result = await provider.complete(request, on_token)
    except ProviderError as exc:
        partial = exc.partial
        cost = _account(recorder, provider, partial.usage, partial.raw, exc.code) if partial is not None \
            else Decimal("0")
        if cost == 0 and (exc.forwarded or recorder.tokens_forwarded):
            cost = worst_case  # text was produced but no usage came back: charge the worst case
            recorder.cost_usd += cost  # and the turn's cost is what the ledger charges
        await _settle(entry_id, cost)
        code = "aborted" if exc.forwarded or recorder.tokens_forwarded else "provider_error"
        recorder.error = f"{exc.code}: {exc.message}"
        log.warning("provider %s failed (%s): %s", provider.name, code, exc)
        return {"error": {"code": code, "message": exc.message, "provider_code": exc.code},
                "outcome": "aborted" if code == "aborted" else "error",
                "answer": partial.text if partial else "", "pending_calls": []}
    except BaseException:
        await _settle(entry_id, worst_case)  # cancelled or crashed mid-call: assume it was billed
        raise
    await _settle(entry_id, _account(recorder, provider, result.usage, result.raw, result.finish_reason or ""))

    # Approvals are keyed by (conversation, call id): a provider that reuses ids across turns
    # (some number them per response) gets fresh ones, consistent in the history it sees next.
    seen = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    for call in result.tool_calls:
        if not call.id or call.id in seen:
            call.id = f"call_{uuid.uuid4().hex[:24]}"
        seen.add(call.id)
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


async def _settle(entry_id: int | None, cost: Decimal) -> None:
    if entry_id is not None:
        await database_sync_to_async(budget_services.budget_settle)(entry_id=entry_id,
                                                                    amount_usd=pricing.round_usd(cost))


def _account(recorder: TurnRecorder, provider: Provider, usage, raw: list, finish: str) -> Decimal:
    """Add one call's usage and cost to the turn; returns the call's cost."""
    cost = pricing.cost_usd(provider.name, provider.model, usage)
    recorder.usage = recorder.usage + usage
    recorder.cost_usd += cost
    recorder.provider_responses.append({
        "finish": finish, "usage": vars(usage).copy(), "chunks": list(raw)[:200],
    })
    return cost


def _unapproved_high_risk(state: AgentState) -> list[dict]:
    approved = set(state.get("approved_call_ids") or [])
    return [c for c in state.get("pending_calls") or []
            if is_high_risk(c["function"]["name"]) and c["id"] not in approved]


def route_after_generate(state: AgentState) -> Literal["execute_tools", "queue_approval", "verify"]:
    calls = state.get("pending_calls") or []
    if state.get("error") or not calls:
        return "verify"
    if _unapproved_high_risk(state):
        return "queue_approval"
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
    tool_ctx = ToolContext(conversation_id=ctx.conversation_id, tool_call_id=call_id,
                           query_vectors=ctx.query_vectors)
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


# --- queue_approval -----------------------------------------------------------------------------

async def queue_approval(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Park each high-risk call for the owner instead of running it.

    The call is validated (a bad draft goes back to the model), recorded as a PendingApproval
    (idempotent per conversation and call; one waiting request per conversation) and answered
    with a tool result saying nothing was sent. The thread then pauses in ``request_approval``
    at the end of the turn, so the visitor can go on asking while the owner decides.
    """
    ctx = runtime.context
    messages = state.get("messages") or []
    visitor_texts = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    high = {c["id"] for c in _unapproved_high_risk(state)}
    awaiting = list(state.get("awaiting") or [])
    results: list[dict] = []
    queued: int | None = None
    for call in (c for c in state.get("pending_calls") or [] if c["id"] in high):
        name, call_id = call["function"]["name"], call["id"]
        runtime.stream_writer({"type": "tool", "name": name, "status": "started"})
        try:
            arguments = TOOLS[name].parse(call["function"]["arguments"]).model_dump()
        except ValueError as exc:
            payload, status = {"error": str(exc)}, "invalid"
        else:
            try:
                approval, _ = await database_sync_to_async(approval_services.approval_request)(
                    conversation_id=ctx.conversation_id, tool_call_id=call_id, tool_name=name,
                    arguments=arguments, visitor_texts=visitor_texts,
                )
            except approval_services.AlreadyDecided:
                payload, status = {"error": "this request was already decided by the owner"}, "invalid"
            except approval_services.AlreadyPending as exc:
                other = exc.approval
                queued = other.pk if other is not None else queued
                payload = {"status": "already_pending", "approval_id": queued,
                           "note": "A message to the owner is already waiting for approval; no second one "
                                   "was drafted. Tell the visitor."}
                status = "pending"
            else:
                queued = approval.pk
                if all(item["approval_id"] != approval.pk for item in awaiting):
                    awaiting.append({"approval_id": approval.pk, "tool_call_id": call_id,
                                     "execution_call_id": approval.execution_call_id, "tool_name": name,
                                     "arguments": approval.arguments})
                payload = {"status": "awaiting_owner_approval", "approval_id": approval.pk,
                           "note": "Drafted. Nothing has been sent: the owner reviews every message first. "
                                   "Tell the visitor so; do not say it was sent."}
                status = "pending"
        runtime.stream_writer({"type": "tool", "name": name, "status": status})
        ctx.recorder.tool_calls.append({"id": call_id, "name": name, "arguments": call["function"]["arguments"],
                                        "status": status, "result": payload})
        results.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(payload, ensure_ascii=False)})
    remaining = [c for c in state.get("pending_calls") or [] if c["id"] not in high]
    return {"messages": results, "pending_calls": remaining, "awaiting": awaiting, "queued_approval_id": queued}


def route_after_queue(state: AgentState) -> Literal["execute_tools", "generate"]:
    # Only calls that are not high-risk (or were approved) may go on to the executor.
    if state.get("pending_calls") and not _unapproved_high_risk(state):
        return "execute_tools"
    return "generate"


# --- request_approval ---------------------------------------------------------------------------

async def request_approval(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Pause the thread until the owner decides on the first waiting request.

    Reached at the end of every run while a request waits, so a visitor's new message (which
    makes LangGraph drop the unfinished interrupt) is followed by a fresh interrupt for the same
    request. Everything before ``interrupt()`` runs again on resume: it only reads the state.
    On resume the decision starts a new turn: approved, the call runs in ``execute_tools`` with
    the arguments the owner approved (re-checked there against the database); rejected or
    expired, the model is told the outcome. Either way the model then answers the visitor.
    """
    item = (state.get("awaiting") or [])[0]
    decision = interrupt({
        "action": item["tool_name"],
        "tool_call_id": item["tool_call_id"],
        "approval_id": item["approval_id"],
        "arguments": item["arguments"],
        "allowed_decisions": ["approve", "edit", "reject"],
    })
    if not (isinstance(decision, dict) and decision.get("approval_id") == item["approval_id"]
            and decision.get("decision") in ("approve", "reject", "expire")):
        # Fail closed: a resume value that does not decide this request never runs the tool.
        raise ValueError(f"resume value does not decide approval {item['approval_id']}")
    messages = state.get("messages") or []
    arguments = decision.get("arguments") if decision["decision"] == "approve" else item["arguments"]
    call = {"id": item["execution_call_id"], "type": "function",
            "function": {"name": item["tool_name"], "arguments": json.dumps(arguments, ensure_ascii=False)}}
    update: dict = turn_reset(turn_start=len(messages), question="") | {
        "awaiting": [a for a in state.get("awaiting") or [] if a["approval_id"] != item["approval_id"]],
        "resolved": {"approval_id": item["approval_id"], "decision": decision["decision"],
                     "reason": str(decision.get("reason") or "")},
    }
    exchange = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    if decision["decision"] == "approve":
        return update | {"messages": exchange, "pending_calls": [call], "approved_call_ids": [call["id"]]}
    outcome = {"status": "rejected_by_owner" if decision["decision"] == "reject" else "expired",
               "reason": str(decision.get("reason") or ""), "note": "Nothing was sent. Tell the visitor."}
    exchange.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(outcome, ensure_ascii=False)})
    runtime.context.recorder.tool_calls.append({"id": call["id"], "name": item["tool_name"],
                                                "arguments": call["function"]["arguments"],
                                                "status": decision["decision"], "result": outcome})
    return update | {"messages": exchange}


def _succeeded(tool_message: dict) -> bool:
    """A tool result without an error (a search that merely quotes the word "error" counts)."""
    try:
        payload = json.loads(tool_message.get("content") or "{}")
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and "error" not in payload


def route_after_approval(state: AgentState) -> Literal["execute_tools", "generate"]:
    return "execute_tools" if state.get("pending_calls") else "generate"


def route_to_end(state: AgentState) -> Literal["request_approval", "__end__"]:
    """Every run ends paused while a contact request waits for the owner."""
    return "request_approval" if state.get("awaiting") else "__end__"


# --- verify -------------------------------------------------------------------------------------

async def verify(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Check citations against the knowledge base and flag ungrounded answers. (Each model call's
    cost was settled to the budget by ``generate`` itself.)"""
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
    elif state.get("budget_refused"):
        outcome = "refused"  # the budget stopped the turn before this model call
    elif state.get("resolved"):
        outcome = "approval_resolved"  # the owner's decision, told to the visitor
    elif state.get("queued_approval_id"):
        outcome = "approval_pending"
    elif citations or long_answer:
        outcome = "answered"
    else:
        outcome = "declined"  # a short answer without a source: the twin said it does not know
    if citations:
        runtime.stream_writer({"type": "citations", "citations": citations})
    update: dict = {"answer": answer, "citations": citations, "unknown_citations": unknown,
                    "hallucination_risk": risky, "outcome": outcome}
    if not state.get("error") and answer:
        # the answer as the visitor keeps it (unknown citations removed) becomes history
        update["messages"] = [{"role": "assistant", "content": answer}]
    return update

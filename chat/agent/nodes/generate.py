"""``generate``: the only node that calls a model, in four steps.

request (the prompt view and the call's limits) → reserve (the call's worst case from the daily
budget, atomically with the check) → call (tokens stream to the visitor as they arrive) →
settle (the reservation replaced by the real cost, whatever happened to the call).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from decimal import Decimal

from django.conf import settings
from langgraph.runtime import Runtime

from budget import services as budget_services
from chat.agent import view
from chat.agent.context import TurnContext
from chat.agent.prompts import system_prompt
from chat.agent.recorder import TurnRecorder
from chat.agent.state import AgentState, Outcome
from chat.agent.tools import tool_schemas
from chat.providers import pricing
from chat.providers.base import ChatRequest, ChatResult, OnToken, Provider, ProviderError, Usage
from chat.providers.markup import MarkupFilter, strip_markup
from chat.texts import text as say
from guards import services as guard_services
from knowledge import claims
from knowledge.claims import figures, vectors
from knowledge.embedders import get_embedder
from knowledge.prefix import knowledge_prefix, knowledge_prefix_kept
from text.language import detect_language
from text.tokens import approx_tokens
from twinsite.db import database_sync_to_async, kept_or_read

log = logging.getLogger(__name__)


async def generate(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """The only node that calls a model. Streams tokens to the visitor as they arrive."""
    ctx = runtime.context
    if ctx.seconds_left() <= 0:  # the turn's time is spent (a tool round ran long): no new call
        return await _failed(_past_deadline(ctx), ctx, None, Decimal("0"))
    request = await _request(state, ctx.recorder)
    provider = ctx.provider
    # The budget: reserve this call's worst case atomically with the check, settle to the real
    # cost afterwards, whatever happens to the call (retries, errors, aborts, approvals).
    worst_case = pricing.worst_case_usd(provider.name, provider.model, request.messages, request.tools,
                                        request.max_tokens)
    entry_id, refused = await _reserve(state, runtime, worst_case)
    if refused is not None:
        return refused

    forward = _forwarder(runtime, provider)
    # control tokens and tool exchanges a model wrote as text never reach the visitor
    markup = MarkupFilter(forward)
    on_token = markup.feed

    try:
        deadline = asyncio.timeout(ctx.timeout())
        try:
            async with deadline:
                result = await provider.complete(request, on_token)
        except TimeoutError:
            if not deadline.expired():
                raise
            raise _past_deadline(ctx) from None
        markup.close()
    except ProviderError as exc:
        # stopped at the deadline, the server was still at work: its prompt at least is billed
        floor = pricing.cost_usd(provider.name, provider.model, pricing.estimated_usage(
            request.messages, request.tools, "")) if exc.code == "deadline" else Decimal("0")
        return await _failed(exc, ctx, entry_id, worst_case, floor=floor)
    except BaseException:
        _settle(ctx.recorder, entry_id, worst_case)  # cancelled or crashed mid-call: assume it was billed
        raise
    usage = result.usage
    if not result.usage_reported and not provider.offline:
        # never assumed zero: a server that streams no usage is charged what the call must have
        # used, at the model's price (an unknown model's at the dearest known)
        usage = pricing.estimated_usage(request.messages, request.tools, result.text + result.refusal + "".join(
            call.name + call.arguments for call in result.tool_calls))
        ctx.recorder.usage_estimated = True
        log.warning("provider %s/%s reported no usage: settled at an estimate of %s in / %s out tokens",
                    provider.name, provider.model, usage.input_tokens, usage.output_tokens)
    _settle(ctx.recorder, entry_id, _account(ctx.recorder, provider, usage, result.raw, result.finish_reason or ""))
    result.text, removed = strip_markup(result.text)
    if removed or markup.removed:
        ctx.recorder.markup_removed += max(removed, markup.removed)
        ctx.recorder.provider_responses[-1]["markup_removed"] = max(removed, markup.removed)
        log.warning("provider %s/%s wrote chat-template or tool markup as text: removed", provider.name,
                    provider.model)
    return _answered(state, request, result, forward)


def _forwarder(runtime: Runtime[TurnContext], provider: Provider) -> OnToken:
    """What passes a visible token on: to the visitor, and to the claim check, whose sentences are
    embedded as they complete (the offline twin quotes its documents: its words place them)."""
    prefetch = None if provider.offline else vectors.Prefetch(get_embedder(), claims.claim_texts, figures.warm_units)

    def forward(text: str) -> None:
        runtime.context.recorder.tokens_forwarded = True
        runtime.stream_writer({"type": "token", "text": text})
        if prefetch is not None:
            prefetch.feed(text)

    return forward


async def _request(state: AgentState, recorder: TurnRecorder) -> ChatRequest:
    """The call: the prompt view of the stored state, the tools, and the round's tool choice."""
    prefix, prefix_sha = await kept_or_read(knowledge_prefix_kept, knowledge_prefix)
    system = system_prompt(settings.TWIN_OWNER_NAME, prefix)
    recorder.system_prompt, recorder.knowledge_sha256 = system, prefix_sha
    messages = state.get("messages") or []
    prompt = view.build_view(
        system=system, messages=messages, turn_start=state.get("turn_start", 0),
        history_tokens=settings.TWIN_HISTORY_TOKENS, tool_result_chars=settings.TWIN_TOOL_RESULT_VIEW_CHARS,
        hidden=frozenset(state.get("kept_from_model") or ()),
    )
    recorder.state_tokens = approx_tokens(system) + approx_tokens(messages)
    recorder.view_tokens = approx_tokens(prompt)
    rounds = state.get("tool_rounds", 0)
    return ChatRequest(
        messages=prompt,
        tools=tool_schemas(),
        # After the round limit the model must answer in text, however hard it insists.
        tool_choice="none" if rounds >= settings.TWIN_MAX_TOOL_ROUNDS else "auto",
        max_tokens=settings.TWIN_MAX_OUTPUT_TOKENS,
    )


async def _reserve(state: AgentState, runtime: Runtime[TurnContext],
                   worst_case: Decimal) -> tuple[int | None, dict | None]:
    """(ledger entry, None) when the budget admits the call; (None, the turn's end) when it refuses."""
    if worst_case <= 0:
        return None, None
    ctx = runtime.context
    provider = ctx.provider
    try:
        entry = await database_sync_to_async(budget_services.budget_reserve)(
            amount_usd=worst_case, conversation_id=ctx.conversation_id, ip_hash=ctx.budget_ip_hash,
            note=f"{provider.name}/{provider.model}", settle=list(ctx.recorder.unsettled))
    except budget_services.BudgetRefused as refused:
        text = say("refuse.budget", detect_language(state.get("question") or "", ctx.lang))
        runtime.stream_writer({"type": "token", "text": text})
        await database_sync_to_async(guard_services.incident_record)(
            guard="budget", rule=refused.reason, text=state.get("question") or "",
            conversation_id=ctx.conversation_id, ip_hash=ctx.visitor_ip_hash)
        return None, {"answer": text, "pending_calls": [], "budget_refused": refused.reason}
    ctx.recorder.unsettled.clear()  # settled in the reservation's transaction
    ctx.recorder.ledger_entry_ids.append(entry.pk)
    return entry.pk, None


def _past_deadline(ctx: TurnContext) -> ProviderError:
    return ProviderError("deadline", f"the turn ran past TWIN_TURN_DEADLINE ({settings.TWIN_TURN_DEADLINE:g} s)",
                         forwarded=ctx.recorder.tokens_forwarded)


async def _failed(exc: ProviderError, ctx: TurnContext, entry_id: int | None, worst_case: Decimal, *,
                  floor: Decimal = Decimal("0")) -> dict:
    """A failed call: settled at what it may have cost (at least ``floor``), the turn ends with
    its error."""
    recorder, provider = ctx.recorder, ctx.provider
    partial = exc.partial
    cost = _account(recorder, provider, partial.usage, partial.raw, exc.code) if partial is not None \
        else Decimal("0")
    if cost == 0 and (exc.forwarded or recorder.tokens_forwarded):
        cost = worst_case  # text was produced but no usage came back: charge the worst case
        recorder.cost_usd += cost  # and the turn's cost is what the ledger charges
    elif cost < floor:
        recorder.cost_usd += floor - cost
        cost = floor
    _settle(recorder, entry_id, cost)
    forwarded = exc.forwarded or recorder.tokens_forwarded
    code = "deadline" if exc.code == "deadline" else "aborted" if forwarded else "provider_error"
    recorder.error = f"{exc.code}: {exc.message}"
    log.warning("provider %s failed (%s): %s", provider.name, code, exc)
    return {"error": {"code": code, "message": exc.message, "provider_code": exc.code},
            "outcome": Outcome.ABORTED.value if forwarded else Outcome.ERROR.value,
            "answer": partial.text if partial else "", "pending_calls": []}


def _settle(recorder: TurnRecorder, entry_id: int | None, cost: Decimal) -> None:
    """The call's real cost, settled with the turn's next reservation or its record (one
    transaction each, not one more: ``budget_services.budgets_settle``). Until then the ledger
    holds the call's worst case, never less; a process that dies first leaves it to expire at
    that (``budget_services.reservations_expire``)."""
    if entry_id is not None:
        recorder.unsettled.append((entry_id, pricing.round_usd(cost)))


def _account(recorder: TurnRecorder, provider: Provider, usage: Usage, raw: list, finish: str) -> Decimal:
    """Add one call's usage and cost to the turn; returns the call's cost."""
    cost = pricing.cost_usd(provider.name, provider.model, usage)
    recorder.usage = recorder.usage + usage
    recorder.cost_usd += cost
    recorder.provider_responses.append({
        "finish": finish, "usage": vars(usage).copy(), "chunks": list(raw)[:200],
    })
    return cost


def _answered(state: AgentState, request: ChatRequest, result: ChatResult, on_token: OnToken) -> dict:
    """The state update of a finished call: its text, and its tool calls under fresh ids."""
    messages = state.get("messages") or []
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

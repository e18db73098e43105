"""``queue_approval`` and ``request_approval``: a high-risk call waits for the owner.

``queue_approval`` parks each high-risk call as a PendingApproval instead of running it;
``request_approval`` pauses the thread with ``interrupt()`` at the end of every run while a
request waits, and on resume turns the owner's decision into the next step.
"""

from __future__ import annotations

import json

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from approvals import services as approval_services
from approvals.errors import AlreadyDecided, AlreadyPending
from chat.agent.context import TurnContext
from chat.agent.state import AgentState, turn_reset
from chat.agent.tools import TOOLS, ToolStatus, is_high_risk
from twinsite.db import database_sync_to_async

# What a resume may answer the interrupt with (``chat.turns.resume.resume_value``): an owner's edit
# arrives as ``approve`` with the edited arguments; ``expire`` is the sweeper's answer when
# nobody decided within TWIN_APPROVAL_TTL.
RESUME_DECISIONS = ("approve", "reject", "expire")


def unapproved_high_risk(state: AgentState) -> list[dict]:
    approved = set(state.get("approved_call_ids") or [])
    return [c for c in state.get("pending_calls") or []
            if is_high_risk(c["function"]["name"]) and c["id"] not in approved]


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
    high = {c["id"] for c in unapproved_high_risk(state)}
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
            except AlreadyDecided:
                payload, status = {"error": "this request was already decided by the owner"}, "invalid"
            except AlreadyPending as exc:
                other = exc.approval
                queued = other.pk if other is not None else queued
                payload = {"status": ToolStatus.ALREADY_PENDING.value, "approval_id": queued,
                           "note": "A message to the owner is already waiting for approval; no second one "
                                   "was drafted. Tell the visitor."}
                status = "pending"
            else:
                queued = approval.pk
                if all(item["approval_id"] != approval.pk for item in awaiting):
                    awaiting.append({"approval_id": approval.pk, "tool_call_id": call_id,
                                     "execution_call_id": approval.execution_call_id, "tool_name": name,
                                     "arguments": approval.arguments})
                payload = {"status": ToolStatus.AWAITING_OWNER.value, "approval_id": approval.pk,
                           "note": "Drafted. Nothing has been sent: the owner reviews every message first. "
                                   "Tell the visitor so; do not say it was sent."}
                status = "pending"
        runtime.stream_writer({"type": "tool", "name": name, "status": status})
        ctx.recorder.tool_calls.append({"id": call_id, "name": name, "arguments": call["function"]["arguments"],
                                        "status": status, "result": payload})
        results.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(payload, ensure_ascii=False)})
    remaining = [c for c in state.get("pending_calls") or [] if c["id"] not in high]
    return {"messages": results, "pending_calls": remaining, "awaiting": awaiting, "queued_approval_id": queued}


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
        "allowed_decisions": list(RESUME_DECISIONS),
    })
    if not (isinstance(decision, dict) and decision.get("approval_id") == item["approval_id"]
            and decision.get("decision") in RESUME_DECISIONS):
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
    status = ToolStatus.REJECTED if decision["decision"] == "reject" else ToolStatus.EXPIRED
    outcome = {"status": status.value,
               "reason": str(decision.get("reason") or ""), "note": "Nothing was sent. Tell the visitor."}
    exchange.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(outcome, ensure_ascii=False)})
    runtime.context.recorder.tool_calls.append({"id": call["id"], "name": item["tool_name"],
                                                "arguments": call["function"]["arguments"],
                                                "status": decision["decision"], "result": outcome})
    return update | {"messages": exchange}

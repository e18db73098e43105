"""``execute_tools``: run the pending calls; parse, validate, enforce risk, time out, never crash."""

from __future__ import annotations

import asyncio
import json
import logging

from langgraph.runtime import Runtime

from approvals.errors import NotApproved
from chat.agent.context import TurnContext
from chat.agent.state import AgentState
from chat.agent.tools import TOOLS, ToolContext

log = logging.getLogger(__name__)


async def execute_tools(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
    """Run the pending calls: parse, validate, enforce risk, time out; never crash the turn."""
    ctx = runtime.context
    approved = set(state.get("approved_call_ids") or [])
    results: list[dict] = []
    for call in state.get("pending_calls") or []:
        name, call_id = call["function"]["name"], call["id"]
        runtime.stream_writer({"type": "tool", "name": name, "status": "started"})
        payload, status = await _run_tool(name, call_id, call["function"]["arguments"], approved, ctx,
                                          question=state.get("question") or "")
        runtime.stream_writer({"type": "tool", "name": name, "status": status})
        ctx.recorder.tool_calls.append({
            "id": call_id, "name": name, "arguments": call["function"]["arguments"],
            "status": status, "result": payload,
        })
        results.append({"role": "tool", "tool_call_id": call_id,
                        "content": json.dumps(payload, ensure_ascii=False)})
    return {"messages": results, "pending_calls": [], "tool_rounds": state.get("tool_rounds", 0) + 1}


async def _run_tool(name: str, call_id: str, raw_args: str, approved: set[str],
                    ctx: TurnContext, *, question: str = "") -> tuple[dict, str]:
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
                           query_vectors=ctx.query_vectors, question=question)
    try:
        payload = await asyncio.wait_for(tool.run(args, tool_ctx), timeout=tool.timeout)
    except TimeoutError:
        return {"error": f"{name} timed out after {tool.timeout:g}s"}, "error"
    except NotApproved as exc:
        return {"error": f"refused: {exc}"}, "refused"
    except Exception as exc:  # a failing tool returns an error result instead of crashing the turn
        log.exception("tool %s failed", name)
        return {"error": f"{name} failed: {type(exc).__name__}"}, "error"
    finally:
        ctx.recorder.retrieved.extend(tool_ctx.retrieved)
    return payload, "ok"

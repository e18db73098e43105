"""Reads for the staff "why" panel: one turn's trace, shaped to be read in thirty seconds."""

from __future__ import annotations

import json

from chat.models import AgentTrace


def trace_for_message(*, message_id: int) -> AgentTrace | None:
    return (AgentTrace.objects.select_related("turn__user_message", "message", "system_prompt")
            .filter(message_id=message_id).first())


def why_context(trace: AgentTrace) -> dict:
    turn = trace.turn
    latency = trace.node_latency_ms or {}
    slowest = max(latency.values(), default=0) or 1
    retrieved = sorted(trace.retrieved or [], key=lambda h: -(h.get("fused_score") or 0))
    return {
        "trace": trace,
        "turn": turn,
        "question": turn.user_message.content if turn and turn.user_message else "",
        "answer": trace.message.content,
        "verdict": (trace.guard or {}).get("verdict"),
        "semantic": (trace.guard or {}).get("semantic") or {},
        "retrieved": [{**hit, "dense": _num(hit.get("dense_score")), "fulltext": _num(hit.get("fulltext_score")),
                       "fused": _num(hit.get("fused_score"), 4)} for hit in retrieved],
        "tool_calls": [{**call, "result_text": json.dumps(call.get("result"), indent=2, ensure_ascii=False)}
                       for call in trace.tool_calls or []],
        "latency": [{"node": node, "ms": ms, "of": slowest} for node, ms in latency.items()],
        "raw": json.dumps(trace.provider_responses, indent=2, ensure_ascii=False, default=str),
    }


def _num(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"

"""The checkpointed state of a conversation thread.

``messages`` is the full working history in OpenAI chat format (user, assistant with tool
calls, tool results), appended to, never rewritten. Everything else is per-turn and reset by
``guard_input``. The prompt a model sees is built from this by ``context.build_view``.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict


class AgentState(TypedDict, total=False):
    messages: Annotated[list[dict], operator.add]
    turn_start: int  # index in messages of the active turn's user message
    question: str
    guard: dict | None  # {"guard": ..., "rule": ...} when an input guard fired
    tool_rounds: int
    pending_calls: list[dict]  # tool calls of the latest model response, as message dicts
    approved_call_ids: list[str]
    # Contact requests waiting for the owner, kept across turns: every run of the thread ends in
    # ``request_approval`` (an interrupt) while this is not empty. [{approval_id, tool_call_id,
    # execution_call_id, tool_name, arguments}]
    awaiting: list[dict]
    queued_approval_id: int | None  # this turn drafted (or found) a request waiting for the owner
    budget_refused: str | None  # the budget refused a model call of this turn (the reason)
    resolved: dict | None  # this run resumed with the owner's decision {approval_id, decision, reason}
    answer: str
    citations: list[dict]
    unknown_citations: list[str]
    hallucination_risk: bool
    outcome: str
    error: dict | None  # {"code": ..., "message": ...}

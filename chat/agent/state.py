"""The checkpointed state of a conversation thread, and the vocabulary of a turn's end.

``messages`` is the full working history in OpenAI chat format (user, assistant with tool
calls, tool results), appended to, never rewritten. Everything else is per-turn and reset by
``guard_input`` (``turn_reset``). The prompt a model sees is built from this by ``view.build_view``.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from django.db import models


class Outcome(models.TextChoices):
    """How a turn ended: the one list, used by the graph, TurnLog's choices and the eval datasets."""

    ANSWERED = "answered"
    DECLINED = "declined"  # no source found: a tested answer, not an error
    REFUSED = "refused"  # a guard or the budget stopped it; no model was called
    APPROVAL_PENDING = "approval_pending"  # a contact request waits for the owner
    APPROVAL_RESOLVED = "approval_resolved"  # the owner's decision, told to the visitor
    ERROR = "error"
    ABORTED = "aborted"  # the provider failed after tokens reached the visitor, or the process died


class AgentState(TypedDict, total=False):
    messages: Annotated[list[dict], operator.add]
    turn_start: int  # index in messages of the active turn's user message
    user_message_id: int | None  # the chat Message of the latest question (the sweeper's key)
    question: str
    guard: dict | None  # {"guard": ..., "rule": ...} when an input guard refused the turn
    # the input screen's verdict (guards.verdicts.ScreenResult.as_dict): {verdict, guard, rule, score, reason}
    screen: dict | None
    # the indices in messages of the visitor's questions the screen shielded or refused, kept across
    # turns: never in a model's view, not even as history (view.build_view)
    kept_from_model: Annotated[list[int], operator.add]
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
    retracted: bool  # the uncited answer was replaced by the decline (TWIN_UNCITED=retract)
    unsupported: list[dict]  # cited sentences their source does not say [{sentence, title, reason, detail, kind,
    # certain}]: a certain one marked for the visitor, a doubt kept for the owner
    outcome: str  # an Outcome, "" while the turn runs
    error: dict | None  # {"code": ..., "message": ...}


def turn_reset(*, turn_start: int, question: str) -> dict:
    """The per-turn state at the start of a turn: a visitor's question or the owner's decision."""
    return {
        "turn_start": turn_start, "question": question, "guard": None, "screen": None, "tool_rounds": 0,
        "pending_calls": [], "approved_call_ids": [], "answer": "",
        "citations": [], "unknown_citations": [], "hallucination_risk": False, "retracted": False, "unsupported": [],
        "outcome": "",
        "error": None,
        "queued_approval_id": None, "resolved": None, "budget_refused": None,
    }

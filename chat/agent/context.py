"""The run's dependencies (LangGraph runtime context): what a node needs that is not history."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from chat.agent.recorder import TurnRecorder
from chat.providers.base import Provider


@dataclass
class TurnContext:
    """Not checkpointed: rebuilt for every run of the thread."""

    provider: Provider
    recorder: TurnRecorder
    conversation_id: str
    # The visitor's words as typed, for the guards only: the state and every table keep the
    # masked form (card and account numbers redacted). Never stored.
    raw_question: str = ""
    visitor_ip_hash: str = ""
    budget_ip_hash: str = ""  # the address the day's budget shares count by (IPv6 by its /48)
    # The question's embeddings as futures per model (question -> {model: Future}), started once
    # by the guard and awaited by the search tool when it searches for the question itself.
    query_vectors: dict = field(default_factory=dict)
    # The visitor's page language: the twin's own sentences follow the question's language, and
    # this one when the question does not tell (a name, a number, a resume by the owner).
    lang: str = "en"
    # When the turn must end (the loop's clock, ``TWIN_TURN_DEADLINE`` after it started): a model
    # call still running then is stopped and the turn ends with ``deadline``.
    deadline: float = math.inf

    def seconds_left(self) -> float:
        return self.deadline - asyncio.get_running_loop().time()

    def timeout(self, grace: float = 0.0) -> float | None:
        """For ``asyncio.timeout``: the seconds left (plus ``grace``), None without a deadline."""
        return None if math.isinf(self.deadline) else max(0.0, self.seconds_left()) + grace

"""What a turn collects for its TurnLog and AgentTrace while the graph runs (``TurnRecorder``).

Lives in the run's context (not the checkpointed state): it is observability, not history.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from decimal import Decimal

from chat.providers.base import Usage


@dataclass
class TurnRecorder:
    provider: str
    model: str
    started: float = field(default_factory=time.perf_counter)
    node_latency_ms: dict[str, int] = field(default_factory=dict)
    provider_responses: list[dict] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)
    retrieved: list[dict] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: Decimal = Decimal("0")
    system_prompt: str = ""
    knowledge_sha256: str = ""
    state_tokens: int = 0
    view_tokens: int = 0
    error: str = ""
    tokens_forwarded: bool = False
    usage_estimated: bool = False  # a call's provider reported no usage: counted by estimate
    markup_removed: int = 0  # chat-template or tool markup the model wrote as text, kept from the visitor
    ledger_entry_ids: list[int] = field(default_factory=list)  # one per model call
    # (ledger entry, real cost) of calls not yet settled: the next reservation or the record does it
    unsettled: list[tuple[int, Decimal]] = field(default_factory=list)
    guard_scores: dict = field(default_factory=dict)  # the semantic guard's cosines, for the trace
    question_vector: list[float] | None = None  # primary model, for grouping unanswered questions

    def add_latency(self, node: str, seconds: float) -> None:
        self.node_latency_ms[node] = self.node_latency_ms.get(node, 0) + round(seconds * 1000)

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

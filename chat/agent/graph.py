"""Wiring only: six nodes, three routers.

guard_input → refuse | generate
generate → execute_tools | request_approval | verify
execute_tools → generate;  request_approval → execute_tools | generate;  verify → END
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import wraps

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from chat.agent import nodes
from chat.agent.state import AgentState
from chat.agent.trace import TurnRecorder

Node = Callable[[AgentState, Runtime[nodes.TurnContext]], Awaitable[dict]]


def timed(name: str, node: Node) -> Node:
    """Record each node's latency in the run's recorder (summed over tool rounds)."""

    @wraps(node)
    async def run(state: AgentState, runtime: Runtime[nodes.TurnContext]) -> dict:
        started = time.perf_counter()
        try:
            return await node(state, runtime)
        finally:
            recorder: TurnRecorder | None = getattr(runtime.context, "recorder", None)
            if recorder is not None:
                recorder.add_latency(name, time.perf_counter() - started)

    return run


def build_graph() -> StateGraph:
    graph = StateGraph(AgentState, context_schema=nodes.TurnContext)
    for name in ("guard_input", "refuse", "generate", "execute_tools", "request_approval", "verify"):
        graph.add_node(name, timed(name, getattr(nodes, name)))
    graph.add_edge(START, "guard_input")
    graph.add_conditional_edges("guard_input", nodes.route_after_guard)
    graph.add_edge("refuse", END)
    graph.add_conditional_edges("generate", nodes.route_after_generate)
    graph.add_edge("execute_tools", "generate")
    graph.add_conditional_edges("request_approval", nodes.route_after_approval)
    graph.add_edge("verify", END)
    return graph

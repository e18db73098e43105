"""Wiring only: seven nodes, five routers.

guard_input → refuse | generate
generate → execute_tools | queue_approval | verify
execute_tools → generate;  queue_approval → execute_tools | generate
refuse, verify → request_approval (while a contact request waits) | END
request_approval (interrupt; resumed with the owner's decision) → execute_tools | generate

``manage.py verify_graph`` proves from this wiring that a high-risk call reaches
``execute_tools`` only through ``request_approval``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import wraps

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from chat.agent import nodes
from chat.agent.state import AgentState
from chat.agent.trace import TurnRecorder

NODES = ("guard_input", "refuse", "generate", "execute_tools", "queue_approval", "request_approval", "verify")
EXECUTOR = "execute_tools"  # the one node that runs tools
APPROVER = "request_approval"  # the one node that may let a high-risk call through

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
    for name in NODES:
        graph.add_node(name, timed(name, getattr(nodes, name)))
    graph.add_edge(START, "guard_input")
    graph.add_conditional_edges("guard_input", nodes.route_after_guard)
    graph.add_conditional_edges("refuse", nodes.route_to_end)
    graph.add_conditional_edges("generate", nodes.route_after_generate)
    graph.add_edge("execute_tools", "generate")
    graph.add_conditional_edges("queue_approval", nodes.route_after_queue)
    graph.add_conditional_edges("request_approval", nodes.route_after_approval)
    graph.add_conditional_edges("verify", nodes.route_to_end)
    return graph


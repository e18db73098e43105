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
from typing import Literal

from langgraph._internal._runnable import RunnableCallable  # langgraph is pinned (requirements.txt)
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from chat.agent.context import TurnContext
from chat.agent.nodes.approval import queue_approval, request_approval, unapproved_high_risk
from chat.agent.nodes.execute import execute_tools
from chat.agent.nodes.generate import generate
from chat.agent.nodes.guard import guard_input, refuse
from chat.agent.nodes.verify import verify
from chat.agent.recorder import TurnRecorder
from chat.agent.state import AgentState

Node = Callable[[AgentState, Runtime[TurnContext]], Awaitable[dict]]

NODES: dict[str, Node] = {
    "guard_input": guard_input, "refuse": refuse, "generate": generate, "execute_tools": execute_tools,
    "queue_approval": queue_approval, "request_approval": request_approval, "verify": verify,
}
EXECUTOR = "execute_tools"  # the one node that runs tools
APPROVER = "request_approval"  # the one node that may let a high-risk call through


# --- routers ------------------------------------------------------------------------------------

def route_after_guard(state: AgentState) -> Literal["refuse", "generate"]:
    return "refuse" if state.get("guard") else "generate"


def route_after_generate(state: AgentState) -> Literal["execute_tools", "queue_approval", "verify"]:
    calls = state.get("pending_calls") or []
    if state.get("error") or not calls:
        return "verify"
    if unapproved_high_risk(state):
        return "queue_approval"
    return "execute_tools"


def route_after_queue(state: AgentState) -> Literal["execute_tools", "generate"]:
    # Only calls that are not high-risk (or were approved) may go on to the executor.
    if state.get("pending_calls") and not unapproved_high_risk(state):
        return "execute_tools"
    return "generate"


def route_after_approval(state: AgentState) -> Literal["execute_tools", "generate"]:
    return "execute_tools" if state.get("pending_calls") else "generate"


def route_to_end(state: AgentState) -> Literal["request_approval", "__end__"]:
    """Every run ends paused while a contact request waits for the owner."""
    return "request_approval" if state.get("awaiting") else "__end__"


# --- wiring -------------------------------------------------------------------------------------

def timed(name: str, node: Node) -> Node:
    """Record each node's latency in the run's recorder (summed over tool rounds)."""

    @wraps(node)
    async def run(state: AgentState, runtime: Runtime[TurnContext]) -> dict:
        started = time.perf_counter()
        try:
            return await node(state, runtime)
        finally:
            recorder: TurnRecorder | None = getattr(runtime.context, "recorder", None)
            if recorder is not None:
                recorder.add_latency(name, time.perf_counter() - started)

    return run


def inline(router: Callable[[AgentState], str]) -> RunnableCallable:
    """A router run on the event loop. LangGraph runs a plain function's route in a thread of
    the loop's executor (a hand-over each way, ~0.1 ms of CPU, three a turn); these only read the
    state. Its targets still come from its ``Literal`` return type; ``verify_graph`` calls ``func``."""

    async def route(state: AgentState) -> str:
        return router(state)

    return RunnableCallable(router, route, name=router.__name__, trace=False)


def build_graph() -> StateGraph:
    graph = StateGraph(AgentState, context_schema=TurnContext)
    for name, node in NODES.items():
        graph.add_node(name, timed(name, node))
    graph.add_edge(START, "guard_input")
    graph.add_conditional_edges("guard_input", inline(route_after_guard))
    graph.add_conditional_edges("refuse", inline(route_to_end))
    graph.add_conditional_edges("generate", inline(route_after_generate))
    graph.add_edge("execute_tools", "generate")
    graph.add_conditional_edges("queue_approval", inline(route_after_queue))
    graph.add_conditional_edges("request_approval", inline(route_after_approval))
    graph.add_conditional_edges("verify", inline(route_to_end))
    return graph

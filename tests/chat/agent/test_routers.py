"""The graph's routers run on the event loop, not in a thread of the loop's executor."""

from __future__ import annotations

import functools
import threading

from chat.agent import graph


async def test_every_router_runs_on_the_loop_and_keeps_its_targets(monkeypatch):
    ran_on: list[int] = []
    original = graph.route_after_guard

    @functools.wraps(original)  # its targets come from its return type
    def watched(state):
        ran_on.append(threading.get_ident())
        return original(state)

    monkeypatch.setattr(graph, "route_after_guard", watched)
    built = graph.build_graph()
    branch = built.branches["guard_input"]["route_after_guard"]
    assert await branch.path.ainvoke({"guard": None}) == "generate"
    assert await branch.path.ainvoke({"guard": {"guard": "injection"}}) == "refuse"
    assert ran_on == [threading.get_ident()] * 2  # the loop's own thread, both times
    assert branch.ends == {"refuse": "refuse", "generate": "generate"}
    for source, branches in built.branches.items():
        for name, spec in branches.items():
            assert spec.ends, f"{source}.{name} lost its targets"
            assert callable(spec.path.func), f"{source}.{name}: verify_graph calls the plain router"

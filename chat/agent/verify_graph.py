"""A proof from the wiring that no path runs a high-risk tool without the owner's approval.

Every path into the executor ends with one of its incoming edges, so it is enough to check
those: a plain edge may come only from the approver (``request_approval``), and every
conditional edge from another node must refuse to route a state that carries an unapproved
high-risk call to the executor — checked by calling the router with such states. At run time
the executor and the tool check again against the database (defence in depth).
"""

from __future__ import annotations

from langgraph.graph import StateGraph

from chat.agent.graph import APPROVER, EXECUTOR
from chat.agent.tools import TOOLS


def _call(call_id: str, name: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _probes() -> list[dict]:
    high = [name for name, tool in TOOLS.items() if tool.risk == "high"]
    low = [name for name, tool in TOOLS.items() if tool.risk != "high"]
    probes = []
    for name in high:
        risky = _call("probe_high", name)
        probes += [
            {"pending_calls": [risky], "approved_call_ids": []},
            {"pending_calls": [_call("probe_low", low[0]), risky] if low else [risky], "approved_call_ids": []},
            {"pending_calls": [risky], "approved_call_ids": ["another_call"]},
        ]
    for probe in probes:
        probe.update(messages=[], awaiting=[], error=None, tool_rounds=0)
    return probes


def _router(branch):
    return getattr(branch.path, "func", None) or branch.path.invoke


def _targets(branch, result) -> set[str]:
    results = result if isinstance(result, list) else [result]
    ends = branch.ends or {}
    return {ends.get(r, r) if isinstance(r, str) else getattr(r, "node", str(r)) for r in results}


def high_risk_violations(builder: StateGraph) -> list[str]:
    """Ways a high-risk call could reach the executor without the approver; empty when none."""
    problems: list[str] = []
    if APPROVER not in builder.nodes:
        problems.append(f"the approver node {APPROVER!r} is missing")
    if EXECUTOR not in builder.nodes:
        return problems
    for source, target in sorted(builder.edges | {(s, e) for starts, e in builder.waiting_edges for s in starts}):
        if target == EXECUTOR and source != APPROVER:
            problems.append(f"plain edge {source} → {EXECUTOR}: every call would run unchecked")
    for source, branches in builder.branches.items():
        if source == APPROVER:
            continue
        for name, branch in branches.items():
            if branch.ends is not None and EXECUTOR not in branch.ends.values():
                continue  # this router cannot reach the executor at all
            route = _router(branch)
            for probe in _probes():
                try:
                    chosen = _targets(branch, route(probe))
                except Exception as exc:  # a router that crashes on the probe is not proven safe
                    problems.append(f"router {source}.{name} failed on a high-risk probe: {exc!r}")
                    break
                if EXECUTOR in chosen:
                    calls = [c["function"]["name"] for c in probe["pending_calls"]]
                    problems.append(f"router {source}.{name} sends unapproved {calls} to {EXECUTOR}")
                    break
    return problems

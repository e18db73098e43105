from __future__ import annotations

import copy
import json

from chat.agent.view import OVERSIZED_NOTICE, build_view, completed_pairs
from text.tokens import approx_tokens


def call(call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "search_knowledge", "arguments": "{}"}}


HISTORY = [
    {"role": "user", "content": "Q1"},
    {"role": "assistant", "content": None, "tool_calls": [call("a")]},
    {"role": "tool", "tool_call_id": "a", "content": json.dumps({"results": ["x" * 500]})},
    {"role": "assistant", "content": "A1 [source: CV]"},
    {"role": "user", "content": "Q2 that failed"},  # no answer: an aborted turn
    {"role": "user", "content": "Q3"},
    {"role": "assistant", "content": "A3"},
    {"role": "user", "content": "Q4 now"},
    {"role": "assistant", "content": None, "tool_calls": [call("b")]},
    {"role": "tool", "tool_call_id": "b", "content": "y" * 5000},
]


def test_completed_turns_become_question_answer_pairs():
    pairs = completed_pairs(HISTORY, before=7)
    assert [(q["content"], a["content"]) for q, a in pairs] == [("Q1", "A1 [source: CV]"), ("Q3", "A3")]


def test_view_has_system_pairs_and_the_whole_active_exchange():
    view = build_view(system="SYS", messages=HISTORY, turn_start=7, history_tokens=1000, tool_result_chars=10_000)
    assert view[0] == {"role": "system", "content": "SYS"}
    assert [m["content"] for m in view[1:5]] == ["Q1", "A1 [source: CV]", "Q3", "A3"]
    assert [m["role"] for m in view[5:]] == ["user", "assistant", "tool"]
    assert view[6]["tool_calls"][0]["id"] == "b"
    assert all(m.get("role") != "tool" or m["tool_call_id"] == "b" for m in view)  # old tool results gone


def test_a_turn_the_screen_kept_from_the_model_is_left_out_of_the_history():
    view = build_view(system="S", messages=HISTORY, turn_start=7, history_tokens=1000, tool_result_chars=10_000,
                      hidden=frozenset({5}))
    assert [m["content"] for m in view[1:4]] == ["Q1", "A1 [source: CV]", "Q4 now"]
    # the active turn is shown whatever the set holds: a shielded turn's own answerer reads it
    active = build_view(system="S", messages=HISTORY, turn_start=7, history_tokens=1000, tool_result_chars=10_000,
                        hidden=frozenset({7}))
    assert active[5]["content"] == "Q4 now"


def test_history_budget_keeps_the_newest_pairs_first():
    budget = approx_tokens("Q3") + approx_tokens("A3")
    view = build_view(system="S", messages=HISTORY, turn_start=7, history_tokens=budget, tool_result_chars=10_000)
    assert [m["content"] for m in view[1:3]] == ["Q3", "A3"]
    assert view[3]["content"] == "Q4 now"


def test_oversized_tool_result_is_replaced_in_the_view_only():
    state = copy.deepcopy(HISTORY)
    view = build_view(system="S", messages=state, turn_start=7, history_tokens=1000, tool_result_chars=1000)
    assert view[-1]["content"] == OVERSIZED_NOTICE.format(size=5000)
    assert state == HISTORY  # building the view deleted and changed nothing

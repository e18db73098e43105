"""Context shaping: the stored state is not the prompt.

``build_view`` derives the messages for one model call from the checkpointed history: the
system prompt (with the knowledge prefix, stable so providers cache it), earlier completed
turns as question / final-answer pairs within a token budget (newest kept first), and the
active turn with its whole tool exchange. Oversized tool results are replaced by a notice in
the view only; a turn the input screen kept from the model (shielded or refused) is left out of
the history. Building the view never changes the state.
"""

from __future__ import annotations

from text.tokens import approx_tokens

OVERSIZED_NOTICE = (
    "[tool result of {size} characters omitted from this view; call the tool again with a narrower "
    "request if you need it]"
)


def completed_pairs(messages: list[dict], before: int,
                    hidden: frozenset[int] = frozenset()) -> list[tuple[dict, dict]]:
    """(question, final answer) for each earlier turn that ended in a text answer; not the turns
    whose question's index is in ``hidden`` (the screen kept it from the model)."""
    pairs: list[tuple[dict, dict]] = []
    question: dict | None = None
    for index, message in enumerate(messages[:before]):
        role = message.get("role")
        if role == "user":
            question = None if index in hidden else message
        elif role == "assistant" and question is not None and not message.get("tool_calls"):
            if message.get("content"):
                pairs.append((question, message))
            question = None
    return pairs


def build_view(*, system: str, messages: list[dict], turn_start: int, history_tokens: int,
               tool_result_chars: int, hidden: frozenset[int] = frozenset()) -> list[dict]:
    """``hidden``: the indices of earlier questions the input screen shielded or refused; their
    turns never reach a model, not even as history."""
    view: list[dict] = [{"role": "system", "content": system}]
    history: list[dict] = []
    budget = history_tokens
    for question, answer in reversed(completed_pairs(messages, turn_start, hidden)):
        cost = approx_tokens(question["content"]) + approx_tokens(answer["content"])
        if cost > budget:
            break
        budget -= cost
        history[:0] = [
            {"role": "user", "content": question["content"]},
            {"role": "assistant", "content": answer["content"]},
        ]
    view.extend(history)
    for message in messages[turn_start:]:
        content = message.get("content")
        shown = dict(message)
        if message.get("role") == "tool" and isinstance(content, str) and len(content) > tool_result_chars:
            shown["content"] = OVERSIZED_NOTICE.format(size=len(content))
        view.append(shown)
    return view

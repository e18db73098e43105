"""A provider for tests that replays a script of responses and counts its calls."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field

from chat.providers.base import ChatRequest, ChatResult, OnToken, ProviderError, ToolCall, Usage


@dataclass
class Step:
    text: str = ""
    tool_calls: list[tuple[str, dict | str]] = field(default_factory=list)
    error: ProviderError | None = None
    error_after_tokens: bool = False  # stream the text, then fail (a mid-stream abort)
    usage: Usage = field(default_factory=lambda: Usage(100, 0, 20))
    finish_reason: str | None = None


class ScriptedProvider:
    offline = False

    def __init__(self, steps: list[Step], *, name: str = "scripted", model: str = "scripted-1") -> None:
        self.name = name
        self.model = model
        self.steps = list(steps)
        self.calls = 0
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest, on_token: OnToken) -> ChatResult:
        self.calls += 1
        self.requests.append(request)
        if not self.steps:
            raise AssertionError("ScriptedProvider ran out of steps")
        step = self.steps.pop(0)
        if step.error is not None and not step.error_after_tokens:
            raise step.error
        for piece in step.text.split(" "):
            if piece:
                on_token(piece + " ")
        if step.error is not None:
            step.error.forwarded = True
            step.error.partial = ChatResult(text=step.text, usage=step.usage)
            raise step.error
        calls = [
            ToolCall(id=f"call_{uuid.uuid4().hex[:24]}", name=name,
                     arguments=args if isinstance(args, str) else json.dumps(args))
            for name, args in step.tool_calls
        ]
        return ChatResult(
            text=step.text, tool_calls=calls, usage=step.usage,
            finish_reason=step.finish_reason or ("tool_calls" if calls else "stop"),
        )

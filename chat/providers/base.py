"""The provider contract: one async call per model turn, tokens forwarded as they arrive."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

OnToken = Callable[[str], None]  # called for each piece of text as it arrives


@dataclass
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cached_tokens + other.cached_tokens,
            self.output_tokens + other.output_tokens,
        )


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it; parsed and validated by the executor
    # Opaque provider data that belongs to the call and must go back with it, byte for byte:
    # Gemini 3's thought signature ({"google": {"thought_signature": ...}}) is rejected with a
    # 400 on the next request of the turn when it is missing or altered.
    extra_content: dict | None = None

    def as_message(self) -> dict:
        message = {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}
        if self.extra_content is not None:
            message["extra_content"] = self.extra_content
        return message


@dataclass
class ChatRequest:
    messages: list[dict]
    tools: list[dict] = field(default_factory=list)
    tool_choice: str = "auto"  # "auto" | "none"
    max_tokens: int = 800


@dataclass
class ChatResult:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str = ""
    usage: Usage = field(default_factory=Usage)
    raw: list = field(default_factory=list)  # provider chunks, for the trace
    attempts: int = 1
    # whether the provider said what the call used; a server that streams no usage (llama.cpp's
    # Python server, some proxies) leaves it False and the call is charged at an estimate
    usage_reported: bool = True


class ProviderError(Exception):
    """A typed provider failure carrying the provider's own message."""

    def __init__(self, code: str, message: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, forwarded: bool = False,
                 partial: ChatResult | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.forwarded = forwarded  # tokens already reached the visitor: never retried
        self.partial = partial  # what was received before the failure (usage counts too)


class Provider(Protocol):
    name: str
    model: str
    offline: bool

    async def complete(self, request: ChatRequest, on_token: OnToken) -> ChatResult: ...

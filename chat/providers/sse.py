"""Server-sent events from OpenAI-compatible chat completions, in every dialect we have met.

``SSEDecoder`` turns arbitrary network chunks into event payloads (``data:`` lines may be split
anywhere; comment and keep-alive lines are skipped). ``StreamAccumulator`` folds the JSON chunks
into text, tool calls, finish reason and usage wherever a provider puts them.
"""

from __future__ import annotations

import json
import uuid

from chat.providers.base import ChatResult, ProviderError, ToolCall, Usage

DONE = "[DONE]"


class SSEDecoder:
    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []

    def feed(self, text: str) -> list[str]:
        """Add a network chunk; return the payloads of the events it completed."""
        self._buffer += text
        events: list[str] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                break
            end, width = cut
            line, self._buffer = self._buffer[:end], self._buffer[end + width:]
            self._line(line, events)
        return events

    def flush(self) -> list[str]:
        events: list[str] = []
        if self._buffer:
            self._line(self._buffer, events)
            self._buffer = ""
        self._line("", events)
        return events

    def _line(self, line: str, events: list[str]) -> None:
        if not line:
            if self._data:
                events.append("\n".join(self._data))
                self._data = []
            return
        if line.startswith(":"):
            return  # comment / keep-alive
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        # event:, id:, retry: carry nothing we use


def _line_end(buffer: str) -> tuple[int, int] | None:
    newline, ret = buffer.find("\n"), buffer.find("\r")  # str.find, not a loop over every character
    if ret < 0 or 0 <= newline < ret:
        return None if newline < 0 else (newline, 1)
    if ret + 1 == len(buffer):
        return None  # may be the first half of \r\n
    return (ret, 2) if buffer[ret + 1] == "\n" else (ret, 1)


def error_from_body(body: object, status: int | None) -> ProviderError:
    """Error bodies come as an object (OpenAI) or as an array of objects (Gemini)."""
    if isinstance(body, list) and body:
        body = body[0]
    message, code = "", f"http_{status}" if status else "provider_error"
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            message = str(err.get("message") or "")
            kind = err.get("status") or err.get("type") or err.get("code")
            if kind:
                code = str(kind).lower()
        elif isinstance(err, str):
            message = err
    retryable = status is not None and (status == 429 or status >= 500)
    return ProviderError(code, message or "provider returned an error", status=status, retryable=retryable)


class StreamAccumulator:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage = Usage()
        self.saw_usage = False
        self.done = False
        self._calls: dict[int, dict] = {}
        self._order: list[int] = []

    def add(self, payload: str) -> str:
        """Fold one event payload; return the visible text it added ("" if none)."""
        if payload.strip() == DONE:
            self.done = True
            return ""
        try:
            chunk = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise ProviderError("bad_stream", f"unparseable stream chunk: {payload[:200]!r}") from exc
        if isinstance(chunk, list) or (isinstance(chunk, dict) and "error" in chunk):
            raise error_from_body(chunk, None)
        if not isinstance(chunk, dict):
            return ""
        try:
            return self._fold(chunk)
        except (AttributeError, TypeError, ValueError, OverflowError) as exc:
            # A chunk of the wrong shape (a string where an object belongs...) is a broken stream,
            # typed like any other provider failure, never a crash of the turn.
            raise ProviderError("bad_stream", f"malformed stream chunk: {payload[:200]!r}") from exc

    def _fold(self, chunk: dict) -> str:
        self._usage(chunk.get("usage"))
        added = ""
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise TypeError("choices is not a list")
        for choice in choices:
            if choice.get("index", 0) != 0:
                continue
            self._usage(choice.get("usage"))  # Kimi
            delta = choice.get("delta") or {}
            content = _text(delta.get("content"))
            if content:
                self.text.append(content)
                added += content
            if refusal := _text(delta.get("refusal")):
                self.refusal.append(refusal)
            calls = delta.get("tool_calls") or []
            if not isinstance(calls, list):
                raise TypeError("tool_calls is not a list")
            for position, call in enumerate(calls):
                self._tool_delta(call, position)
            if finish := _text(choice.get("finish_reason")):
                self.finish_reason = finish
        return added

    def _usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        self.saw_usage = True
        details = usage.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        if cached is None:
            cached = usage.get("prompt_cache_hit_tokens")  # DeepSeek
        if cached is None:
            cached = usage.get("cached_tokens")  # Moonshot / Kimi
        self.usage = Usage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            cached_tokens=int(cached or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        )

    def _tool_delta(self, call: dict, position: int) -> None:
        index = call.get("index")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError("a tool call's index is not an integer")
        if index is None:
            # Gemini omits index: a delta with an id starts a new call, one without continues
            # the latest; several ids in one delta are told apart by their position.
            if call.get("id") or not self._order:
                index = (max(self._order) + 1) if self._order else position
            else:
                index = self._order[-1]
        slot = self._calls.get(index)
        if slot is None:
            slot = self._calls[index] = {"id": "", "name": "", "arguments": ""}
            self._order.append(index)
        if call_id := _text(call.get("id")):
            slot["id"] = call_id
        function = call.get("function") or {}
        if name := _text(function.get("name")):
            slot["name"] += name if not slot["name"] else ""
        slot["arguments"] += _text(function.get("arguments"))
        extra = call.get("extra_content")
        if isinstance(extra, dict):
            # Kept as received (Gemini's thought signature lives here) to be sent back unchanged.
            slot["extra_content"] = _merged(slot.get("extra_content") or {}, extra)

    def result(self) -> ChatResult:
        calls = []
        for index in self._order:
            slot = self._calls[index]
            # A dialect that sends no id still gets a unique one (approvals are keyed by it).
            slot["id"] = slot["id"] or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(id=slot["id"], name=slot["name"], arguments=slot["arguments"] or "{}",
                                  extra_content=slot.get("extra_content")))
        return ChatResult(
            text="".join(self.text), tool_calls=calls, finish_reason=self.finish_reason,
            refusal="".join(self.refusal), usage=self.usage, usage_reported=self.saw_usage,
        )


def _text(value: object) -> str:
    """A string field of a chunk: absent (null) is "", anything but a string a malformed chunk."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _merged(base: dict, extra: dict) -> dict:
    """``extra`` folded into ``base`` (nested objects merged, later values win): a provider that
    spreads a call's extra data over several deltas still gets it back as one object."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out

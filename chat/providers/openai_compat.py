"""One OpenAI-compatible chat-completions client over httpx, for every hosted provider.

Retries happen only while nothing has reached the visitor: a failure after the first
forwarded token ends the turn (``forwarded=True``) and the stream is never restarted, so a
visitor never sees an answer start twice.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import ssl
import threading
import weakref
from email.utils import parsedate_to_datetime

import httpx

from chat.providers.base import ChatRequest, ChatResult, OnToken, ProviderError
from chat.providers.faults import FaultInjectingTransport
from chat.providers.sse import SSEDecoder, StreamAccumulator, error_from_body
from twinsite.retry import backoff_delay

# One TLS context per process (loading the CA bundle costs ~70 ms) and one pooled client per
# event loop, shared by every turn: keep-alive connections to the provider, no handshake per call.
_ssl_lock = threading.Lock()
_ssl_context: ssl.SSLContext | None = None
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _tls() -> ssl.SSLContext:
    global _ssl_context  # noqa: PLW0603 (built once, lazily)
    with _ssl_lock:
        if _ssl_context is None:
            _ssl_context = httpx.create_ssl_context()
        return _ssl_context


def _shared_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _clients[loop] = httpx.AsyncClient(
            verify=_tls(), limits=httpx.Limits(max_connections=200, max_keepalive_connections=50))
    return client


# Providers whose API accepts "strict": true on function definitions.
STRICT_TOOLS = {"openai"}
MAX_RAW_CHUNKS = 400
# Gemini 3 checks the thought signature of the first call of every model step in the current
# turn (400 when it is missing). A step the graph wrote itself, such as the owner-approved
# execution call, never had one: Google's documented placeholder tells the check to skip it.
SIGNED_PROVIDERS = {"gemini"}
SKIP_SIGNATURE = "skip_thought_signature_validator"


class OpenAICompatibleProvider:
    offline = False

    def __init__(self, *, name: str, model: str, base_url: str, api_key: str = "",
                 timeout: float = 60.0, max_attempts: int = 4, backoff: float = 0.5,
                 drop_every: int = 0, cut_stream: bool = False, tool_step_content: str | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.name = name
        # What an assistant step that only calls tools carries as ``content``: None sends null
        # (the API's own form, which OpenAI, Gemini, DeepSeek, Kimi and Ollama take); "" for
        # servers that refuse null (llama-cpp-python's: TWIN_TOOL_STEP_CONTENT=empty).
        self.tool_step_content = tool_step_content
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = httpx.Timeout(timeout, connect=min(timeout, 10.0))
        self.max_attempts = max_attempts
        self.backoff = backoff
        # A given transport (tests) or failure injection get a client per call; otherwise the
        # loop's shared, pooled client.
        self._inner = transport
        self._transport = (
            FaultInjectingTransport(transport or httpx.AsyncHTTPTransport(verify=_tls()),
                                    drop_every=drop_every, cut_stream=cut_stream)
            if drop_every or cut_stream else transport
        )

    def with_faults(self, *, drop_every: int = 0, cut_stream: bool = False) -> OpenAICompatibleProvider:
        """A copy whose requests go through failure injection (``run_evals --fault-drop-every``)."""
        clone = copy.copy(self)
        clone._transport = FaultInjectingTransport(self._inner or httpx.AsyncHTTPTransport(verify=_tls()),
                                                   drop_every=drop_every, cut_stream=cut_stream)
        return clone

    def payload(self, request: ChatRequest) -> dict:
        messages = [_parsable(m) for m in request.messages]
        if self.tool_step_content is not None:
            messages = [_with_content(m, self.tool_step_content) for m in messages]
        if self.name in SIGNED_PROVIDERS:
            messages = [_signed(m) for m in messages]
        body: dict = {
            "model": self.model,
            # Tool calls carry their extra_content (thought signatures) exactly as received.
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": request.max_tokens,
        }
        if request.tools:
            tools = request.tools
            if self.name not in STRICT_TOOLS:
                tools = [
                    {**t, "function": {k: v for k, v in t["function"].items() if k != "strict"}}
                    for t in tools
                ]
            body["tools"] = tools
            body["tool_choice"] = request.tool_choice
        return body

    async def complete(self, request: ChatRequest, on_token: OnToken) -> ChatResult:
        if self._transport is None:
            return await self._attempts(_shared_client(), request, on_token)
        async with httpx.AsyncClient(transport=self._transport, timeout=self._timeout) as client:
            return await self._attempts(client, request, on_token)

    async def _attempts(self, client: httpx.AsyncClient, request: ChatRequest, on_token: OnToken) -> ChatResult:
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await self._once(client, request, on_token)
            except ProviderError as exc:
                if exc.forwarded or not exc.retryable or attempt >= self.max_attempts:
                    raise
                await asyncio.sleep(self._delay(attempt, exc.retry_after))
                continue
            result.attempts = attempt
            return result

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, 30.0)
        # exponential backoff with full jitter around the base
        return backoff_delay(attempt - 1, base=self.backoff * (0.5 + random.random()), cap=30.0)

    async def _once(self, client: httpx.AsyncClient, request: ChatRequest, on_token: OnToken) -> ChatResult:
        headers = {"Accept": "text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        accumulator = StreamAccumulator()
        decoder = SSEDecoder()
        raw: list = []
        forwarded = False
        try:
            async with client.stream("POST", f"{self.base_url}/chat/completions", json=self.payload(request),
                                     headers=headers, timeout=self._timeout) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise _http_error(response)
                async for text in response.aiter_text():
                    for payload in decoder.feed(text):
                        if len(raw) < MAX_RAW_CHUNKS:
                            raw.append(payload)
                        added = accumulator.add(payload)
                        if added:
                            forwarded = True
                            on_token(added)
                for payload in decoder.flush():
                    raw.append(payload)
                    accumulator.add(payload)
        except ProviderError as exc:
            exc.forwarded = exc.forwarded or forwarded
            exc.partial = _partial(accumulator, raw)
            raise
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", str(exc) or "provider timed out", retryable=not forwarded,
                                forwarded=forwarded, partial=_partial(accumulator, raw)) from exc
        except httpx.HTTPError as exc:
            raise ProviderError("connection", str(exc) or type(exc).__name__, retryable=not forwarded,
                                forwarded=forwarded, partial=_partial(accumulator, raw)) from exc
        if not accumulator.done and accumulator.finish_reason is None:
            raise ProviderError("incomplete_stream", "the stream ended before a finish reason",
                                retryable=not forwarded, forwarded=forwarded,
                                partial=_partial(accumulator, raw))
        result = accumulator.result()
        result.raw = raw
        return result


def _parsable(message: dict) -> dict:
    """An assistant step whose call arguments are no JSON object, with ``{}`` for them: a server
    that renders the history through its chat template parses them, and llama-server answers 500
    ("Failed to parse tool call arguments as JSON") to every retry of the turn. The tool result
    that follows the step already tells the model its arguments were refused."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not calls:
        return message
    sent = [call if _json_object(call.get("function", {}).get("arguments"))
            else {**call, "function": {**call.get("function", {}), "arguments": "{}"}} for call in calls]
    return message if all(a is b for a, b in zip(sent, calls, strict=True)) else {**message, "tool_calls": sent}


def _json_object(text: object) -> bool:
    try:
        return isinstance(json.loads(text), dict) if isinstance(text, str) else False
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return False


def _with_content(message: dict, content: str) -> dict:
    """An assistant step that only calls tools, with ``content`` instead of null: llama-cpp-python's
    server answers 500 to null and its chat templates fail without content, while Gemini's
    OpenAI-compatible endpoint and Ollama have been reported to answer 400 to an empty string."""
    if message.get("role") == "assistant" and message.get("tool_calls") and message.get("content") is None:
        return {**message, "content": content}
    return message


def _signature(call: dict) -> str | None:
    google = (call.get("extra_content") or {}).get("google") if isinstance(call.get("extra_content"), dict) else None
    return google.get("thought_signature") if isinstance(google, dict) else None


def _signed(message: dict) -> dict:
    """An assistant step whose calls carry no thought signature gets the placeholder on its first
    call; a step the model signed is sent back untouched."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not calls or any(_signature(c) for c in calls):
        return message
    first = dict(calls[0])
    extra = dict(first.get("extra_content") or {}) if isinstance(first.get("extra_content"), dict) else {}
    google = extra.get("google") if isinstance(extra.get("google"), dict) else {}
    extra["google"] = {**google, "thought_signature": SKIP_SIGNATURE}
    first["extra_content"] = extra
    return {**message, "tool_calls": [first, *calls[1:]]}


def _partial(accumulator: StreamAccumulator, raw: list) -> ChatResult:
    result = accumulator.result()
    result.raw = raw
    return result


def _http_error(response: httpx.Response) -> ProviderError:
    try:
        body = response.json()
    except ValueError:
        body = {"error": {"message": response.text[:500]}}
    error = error_from_body(body, response.status_code)
    error.retry_after = _retry_after(response.headers.get("retry-after"))
    return error


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        from datetime import UTC, datetime

        return max(0.0, (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None

"""A scripted "model" for the fake OpenAI-compatible server, so whole eval runs go over real HTTP.

Decisions come from the offline provider (which tool to call, what to answer and cite), run on
the request body the server received. The brain then behaves like a hosted model in the ways
the client and the graph must cope with:

- it speaks Gemini 3's OpenAI-compatible dialect: tool-call deltas without ``index``, a thought
  signature in ``extra_content.google.thought_signature`` on the first call of each step, usage
  on the finish chunk, no ``[DONE]``; the SSE text is cut into small network chunks that split
  ``data:`` lines anywhere;
- like Gemini 3, it answers 400 ``INVALID_ARGUMENT`` when a request of the current turn sends a
  model step back without its signature, or with a signature it did not issue for that call;
- it is sloppy about sources: every cited answer also cites a document that does not exist, which
  the graph's citation check must remove before the visitor sees it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import threading
import time
import uuid

from django.conf import settings
from django.db import connections

from chat.citations import CITATION, cite
from chat.providers.base import ChatRequest, ChatResult
from chat.providers.offline import OfflineProvider
from tests.fakes.openai_server import Reply
from text.tokens import approx_tokens

SKIP_SIGNATURE = "skip_thought_signature_validator"  # Google's documented placeholder
INVENTED_SOURCE = "Mira's LinkedIn profile"


class OfflineBrain:
    def __init__(self, *, invented_source: str | None = INVENTED_SOURCE, network_chunk: int = 61) -> None:
        self.invented_source = invented_source
        self.network_chunk = network_chunk
        self._key = os.urandom(16)
        self._lock = threading.Lock()
        self.signatures_issued = 0
        self.signatures_checked = 0  # signed steps sent back intact
        # Steps sent back with Google's placeholder instead of a signature: the client puts it on
        # steps without one (the graph's own approval step), so in a run without approvals any
        # placeholder means a signature was lost on the way.
        self.placeholders = 0
        self.rejected: list[str] = []
        self.invented_citations = 0

    # --- the thought signature -----------------------------------------------------------------

    def sign(self, name: str, arguments: str) -> str:
        digest = hmac.new(self._key, f"{name}\0{arguments}".encode(), hashlib.sha256).digest()
        return base64.b64encode(b"\x0a\x24" + digest).decode()

    def _signature_problem(self, messages: list[dict]) -> str | None:
        """Gemini checks the current turn: the steps after the latest visitor message."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        checked = placeholders = 0
        for position, message in enumerate(messages[last_user + 1:], start=last_user + 1):
            calls = message.get("tool_calls") if message.get("role") == "assistant" else None
            if not calls:
                continue
            for number, call in enumerate(calls):
                google = (call.get("extra_content") or {}).get("google") or {}
                signature = google.get("thought_signature")
                function = call.get("function") or {}
                if signature is None:
                    if number == 0:
                        return (f"Function call is missing a thought_signature in functionCall parts. Additional "
                                f"data, function call `default_api:{function.get('name')}` , position {position}.")
                    continue
                if signature == SKIP_SIGNATURE:
                    placeholders += 1
                elif signature != self.sign(function.get("name", ""), function.get("arguments", "")):
                    return f"Corrupted thought signature for function call `{function.get('name')}`."
            checked += 1
        with self._lock:
            self.signatures_checked += checked - placeholders
            self.placeholders += placeholders
        return None

    # --- a request ------------------------------------------------------------------------------

    def __call__(self, body: dict) -> Reply:
        messages = body.get("messages") or []
        problem = self._signature_problem(messages)
        if problem is not None:
            with self._lock:
                self.rejected.append(problem)
            error = [{"error": {"code": 400, "message": problem, "status": "INVALID_ARGUMENT"}}]
            return Reply(400, [json.dumps(error)])
        request = ChatRequest(messages=messages, tools=body.get("tools") or [],
                              tool_choice=body.get("tool_choice") or "auto", max_tokens=body.get("max_tokens") or 800)
        try:
            result = asyncio.run(OfflineProvider(owner=settings.TWIN_OWNER_NAME).complete(request, lambda _: None))
        finally:
            connections.close_all()  # this server thread must not keep database connections open
        stream = "".join(self._stream(body.get("model") or "gemini", messages, result))
        size = self.network_chunk
        return Reply(chunks=[stream[i:i + size] for i in range(0, len(stream), size)])

    def _stream(self, model: str, messages: list[dict], result: ChatResult) -> list[str]:
        meta = {"created": int(time.time()), "id": uuid.uuid4().hex[:22], "model": model,
                "object": "chat.completion.chunk"}

        def event(delta: dict, finish: str | None = None, usage: dict | None = None) -> str:
            choice: dict = {"delta": {"role": "assistant", **delta}, "index": 0}
            if finish:
                choice["finish_reason"] = finish
            chunk = {"choices": [choice], **meta} | ({"usage": usage} if usage else {})
            return "data: " + json.dumps(chunk, ensure_ascii=False) + "\n\n"

        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        prompt = approx_tokens(json.dumps(messages, ensure_ascii=False))
        out: list[str] = []
        if result.tool_calls:
            for number, call in enumerate(result.tool_calls):
                delta = {"function": {"arguments": call.arguments, "name": call.name},
                         "id": f"function-call-{uuid.uuid4()}", "type": "function"}
                if number == 0:  # Gemini signs the first call of a step only
                    delta = {"extra_content": {"google": {"thought_signature": self.sign(call.name, call.arguments)}},
                             **delta}
                    with self._lock:
                        self.signatures_issued += 1
                out.append(event({"tool_calls": [delta]}))
            output = sum(approx_tokens(c.arguments) for c in result.tool_calls)
            finish = "tool_calls"
        else:
            text = result.text
            if self.invented_source and CITATION.search(text):
                text = f"{text} {cite(self.invented_source)}"
                with self._lock:
                    self.invented_citations += 1
            words = text.split(" ")
            out += [event({"content": " ".join(words[i:i + 4]) + (" " if i + 4 < len(words) else "")})
                    for i in range(0, len(words), 4)]
            output = approx_tokens(text)
            finish = "stop"
        out.append(event({}, finish, {"prompt_tokens": prompt, "completion_tokens": output,
                                      "total_tokens": prompt + output,
                                      "prompt_tokens_details": {"cached_tokens": approx_tokens(system)}}))
        return out

"""What a configured model server can do, asked with real requests (``manage.py check_provider``).

Small and local servers differ from the hosted APIs in ways that look like a broken twin:
llama.cpp's server drops ``tools`` unless started with ``--jinja`` and a tool-capable template,
llama-cpp-python's default chat format ignores them, some servers stream no usage. Each check
is one streamed request; each failure comes with the fix known for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chat.providers.base import ChatRequest, Provider, ProviderError
from chat.providers.markup import strip_markup

_TOOL = {"type": "function", "function": {
    "name": "lookup", "description": "Look something up in the owner's knowledge base.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["query"],
                   "properties": {"query": {"type": "string", "description": "What to look for."}}}}}

FIXES = {
    "streams_text": "the server answered no text: check TWIN_BASE_URL and TWIN_MODEL, and that the model is loaded",
    "streams_tool_calls": "no tool call came back: llama.cpp's llama-server needs --jinja and a model whose chat "
                          "template supports tools; llama-cpp-python needs --chat_format chatml-function-calling "
                          "(which cannot stream a tool call: the twin then retries and fails) or a functionary model",
    "reports_usage": "the stream carries no usage: every call is charged at the twin's estimate "
                     "(turns are marked usage_estimated); a server that streams usage is billed exactly",
    "no_markup": "the model wrote chat-template or tool markup as text (removed before visitors see it): the "
                 "server's chat template does not match the model",
    "fits_prompt": "the server refused or failed on the twin's own prompt (its knowledge prefix, up to "
                   "TWIN_PREFIX_TOKENS): start it with a larger context, 8192 tokens or more for the sample "
                   "(llama.cpp: -c 8192; llama-cpp-python: --n_ctx 8192), or lower TWIN_PREFIX_TOKENS",
}


@dataclass
class Capabilities:
    streams_text: bool = False
    streams_tool_calls: bool = False
    reports_usage: bool = False
    no_markup: bool = True
    fits_prompt: bool | None = None  # None: not asked (no prompt given)
    errors: list[str] = field(default_factory=list)

    def problems(self) -> dict[str, str]:
        return {name: fix for name, fix in FIXES.items() if getattr(self, name) is False}

    @property
    def usable(self) -> bool:
        """What the twin cannot work without: text, tool calls, and its prompt when asked (a
        prompt request that failed for another reason than its size is reported, not held against it)."""
        failed = any(e.startswith(("text:", "tools:")) for e in self.errors)
        return not failed and self.streams_text and self.streams_tool_calls and self.fits_prompt is not False

    def as_dict(self) -> dict:
        return {"streams_text": self.streams_text, "streams_tool_calls": self.streams_tool_calls,
                "reports_usage": self.reports_usage, "no_markup": self.no_markup, "fits_prompt": self.fits_prompt,
                "errors": self.errors, "fixes": self.problems()}


async def capabilities(provider: Provider, prompt: str = "") -> Capabilities:
    """Two streamed requests: one for text, one that invites a tool call; and with ``prompt``
    (the twin's system prompt) a third, whether the server takes a prompt that long."""
    found = Capabilities()
    pieces: list[str] = []
    text_request = ChatRequest(messages=[{"role": "system", "content": "You are a test. Answer in a few words."},
                                         {"role": "user", "content": "Say hello."}], max_tokens=32)
    tool_request = ChatRequest(
        messages=[{"role": "system", "content": "Use the lookup tool for every question."},
                  {"role": "user", "content": "Look up the owner's day rate with the lookup tool."}],
        tools=[_TOOL], max_tokens=64)
    try:
        text = await provider.complete(text_request, pieces.append)
        found.streams_text = bool(pieces) and bool("".join(pieces).strip())
        found.reports_usage = text.usage_reported and (text.usage.input_tokens + text.usage.output_tokens) > 0
        found.no_markup = strip_markup(text.text)[1] == 0
    except ProviderError as exc:
        found.errors.append(f"text: {exc.code}: {exc.message}")
    try:
        tool = await provider.complete(tool_request, lambda piece: None)
        found.streams_tool_calls = any(call.name == "lookup" for call in tool.tool_calls)
        found.no_markup = found.no_markup and strip_markup(tool.text)[1] == 0
    except ProviderError as exc:
        found.errors.append(f"tools: {exc.code}: {exc.message}")
    if prompt:
        try:
            answer = await provider.complete(ChatRequest(
                messages=[{"role": "system", "content": prompt}, {"role": "user", "content": "Say hello."}],
                max_tokens=64), lambda piece: None)
            found.fits_prompt = True if answer.text.strip() or answer.tool_calls else None
        except ProviderError as exc:
            # refused for its size (400/413, or a message about the context): it does not fit;
            # anything else (a timeout while a CPU server reads it, a 429) leaves it unknown
            too_big = exc.status in (400, 413) or "context" in exc.message.lower()
            found.fits_prompt = False if too_big else None
            found.errors.append(f"prompt: {exc.code}: {exc.message}")
    return found

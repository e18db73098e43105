"""Chat-template and tool markup that a model wrote as text never reaches the visitor.

Small or local models served with a mismatched chat template write their own control tokens
(``<|im_start|>``, ``<|eot_id|>``) or a tool exchange as text (``<tool_call>{...}</tool_call>``,
``<tool_response>...``). ``MarkupFilter`` sits between the provider's stream and the visitor: it
drops the known control tokens and whole tool blocks, holding back only the few characters that
could still be the start of one, so the stream stays a stream. What it removed is counted, and
the turn is flagged in its trace.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# whole blocks: the tag, what it holds and its closing tag (an unclosed one runs to the end)
_BLOCKS = ("tool_call", "tool_response", "tool_calls", "function_call", "think")
_BLOCK = re.compile(r"<(" + "|".join(_BLOCKS) + r")>.*?(?:</\1>|\Z)", re.DOTALL)
# single tokens: <|im_start|>, <|eot_id|>, <|start_header_id|>assistant<|end_header_id|>, </s> …
_TOKEN = re.compile(r"<\|start_header_id\|>\w*<\|end_header_id\|>|<\|[a-z_]{2,40}\|>(?:assistant|user|system)?\n?|"
                    r"</?s>|\[/?INST\]|<\|?/?(?:im_start|im_end|endoftext)\|?>", re.IGNORECASE)
_OPEN_HEADER = re.compile(r"(?:<\|im_start\|>|<\|start_header_id\|>)(?:[^\n<]{0,20}|[^\n<]{0,20}<\|[a-z_]*\|?)$")
_OPENERS = ["<|", "</s>", "<s>", "[INST]", "[/INST]", *(f"<{b}>" for b in _BLOCKS)]
_BLOCK_OPEN = re.compile(r"<(" + "|".join(_BLOCKS) + r")>")
# every block, token, header and opener above begins with one of these: text without them is no markup
_MARKUP_FIRST = ("<", "[")


def strip_markup(text: str) -> tuple[str, int]:
    """``text`` without known markup, and how many pieces were removed."""
    text, blocks = _BLOCK.subn("", text)
    text, tokens = _TOKEN.subn("", text)
    return text, blocks + tokens


class MarkupFilter:
    """Feeds on streamed pieces, passes on what is certainly no markup (``emit``)."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.pending = ""
        self.removed = 0

    def feed(self, piece: str) -> None:
        if not self.pending and not any(first in piece for first in _MARKUP_FIRST):
            self._out(piece)  # the usual streamed word: nothing to remove or hold back (same as below)
            return
        self.pending += piece
        # inside an unclosed block: wait for its end
        opened = _BLOCK_OPEN.search(self.pending)
        if opened and f"</{opened.group(1)}>" not in self.pending[opened.end():]:
            safe, self.pending = self.pending[:opened.start()], self.pending[opened.start():]
            self._out(safe)
            return
        # a role header whose role word has not all come yet ("<|im_start|>assist")
        header = _OPEN_HEADER.search(self.pending)
        if header:
            head, self.pending = self.pending[:header.start()], self.pending[header.start():]
            cleaned, removed = strip_markup(head)
            self.removed += removed
            self._out(cleaned)
            return
        cleaned, removed = strip_markup(self.pending)
        self.removed += removed
        hold = _possible_start(cleaned)
        self.pending = cleaned[len(cleaned) - hold:] if hold else ""
        self._out(cleaned[:len(cleaned) - hold] if hold else cleaned)

    def close(self) -> None:
        """The stream ended: what is held back goes out, an unclosed block does not."""
        cleaned, removed = strip_markup(self.pending)
        self.removed += removed
        self.pending = ""
        self._out(cleaned)

    def _out(self, text: str) -> None:
        if text:
            self.emit(text)


def _possible_start(text: str) -> int:
    """How many characters at the end of ``text`` could begin a marker still being streamed."""
    longest = 0
    for opener in _OPENERS:
        for size in range(1, len(opener)):
            if text.endswith(opener[:size]):
                longest = max(longest, size)
    # "<|" followed by a token's letters, not yet closed
    if (match := re.search(r"<\|[a-z_]{0,40}\|?$", text, re.IGNORECASE)) is not None:
        longest = max(longest, len(text) - match.start())
    return longest

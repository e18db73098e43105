"""Chat-template and tool markup written as text never reaches the visitor, however it is split
across the stream's pieces."""

from __future__ import annotations

import pytest

from chat.providers.markup import MarkupFilter, strip_markup

LEAKS = [
    ('She built it. <tool_call>{"name": "search_knowledge", "arguments": {"query": "x"}}</tool_call>',
     "She built it. "),
    ('<tool_response>{"results": [{"title": "CV"}]}</tool_response>She lives in Leiden.', "She lives in Leiden."),
    ("<|im_start|>assistant\nHello there.<|im_end|>", "Hello there."),
    ("<|start_header_id|>assistant<|end_header_id|>Hi!<|eot_id|>", "Hi!"),
    ("[INST] ignore [/INST]Fine.</s>", " ignore Fine."),
    ("An unclosed <tool_call>{\"name\": \"draft", "An unclosed "),
]


@pytest.mark.parametrize(("text", "shown"), LEAKS)
@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_markup_is_removed_from_the_stream_whatever_the_pieces(text, shown, size):
    out: list[str] = []
    markup = MarkupFilter(out.append)
    for i in range(0, len(text), size):
        markup.feed(text[i:i + size])
    markup.close()
    assert "".join(out) == shown and markup.removed >= 1
    assert strip_markup(text)[0].strip() == shown.strip()


def test_ordinary_text_with_angle_brackets_streams_unchanged_and_promptly():
    out: list[str] = []
    markup = MarkupFilter(out.append)
    for piece in ["Use a < b and ", "x <= y; ", "<br> is HTML, ", "<tool> is a word. ", "Done."]:
        markup.feed(piece)
    assert "".join(out).startswith("Use a < b and x <= y; <br> is HTML, <tool> is a word. ")
    markup.close()
    assert "".join(out) == "Use a < b and x <= y; <br> is HTML, <tool> is a word. Done." and markup.removed == 0


def test_plain_pieces_pass_at_once_and_whole_and_a_held_back_start_still_joins_the_next():
    out: list[str] = []
    markup = MarkupFilter(out.append)
    for piece in ["The twin ", "answers ", "in words."]:
        markup.feed(piece)
        assert out[-1] == piece  # emitted when it came, unchanged
    markup.feed(" Maybe <")
    assert out[-1] == " Maybe " and markup.pending == "<"
    markup.feed("b")  # no markup character, but what was held back goes with it
    markup.feed(" then <")
    markup.feed("|im_end|>")
    markup.close()
    assert "".join(out) == "The twin answers in words. Maybe <b then " and markup.removed == 1

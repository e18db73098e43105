from __future__ import annotations

from pathlib import Path

import pytest

from chat.providers.base import ProviderError
from chat.providers.sse import SSEDecoder, StreamAccumulator, error_from_body

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sse"


def replay(name: str, split: int | None = None):
    """Feed a recorded body through the decoder in pieces of ``split`` characters."""
    body = (FIXTURES / name).read_text()
    pieces = [body] if split is None else [body[i:i + split] for i in range(0, len(body), split)]
    decoder, acc, shown = SSEDecoder(), StreamAccumulator(), []
    for piece in pieces:
        for payload in decoder.feed(piece):
            shown.append(acc.add(payload))
    for payload in decoder.flush():
        shown.append(acc.add(payload))
    return acc, "".join(shown)


@pytest.mark.parametrize("split", [None, 1, 2, 7, 64])
def test_data_lines_split_anywhere_give_the_same_result(split):
    acc, shown = replay("openai_usage_final_chunk.txt", split)
    assert shown == "Mira works at Lumora."
    assert acc.done and acc.finish_reason == "stop"
    assert (acc.usage.input_tokens, acc.usage.cached_tokens, acc.usage.output_tokens) == (1200, 1024, 7)


def test_crlf_line_endings_and_multiline_data():
    decoder = SSEDecoder()
    events = decoder.feed('data: {"a":\r\ndata: 1}\r\n\r\n: comment\r\n\r')
    events += decoder.feed("\ndata: [DONE]\r\n\r\n")
    assert events == ['{"a":\n1}', "[DONE]"]


def test_deepseek_keepalives_usage_on_finish_chunk_and_cache_hits():
    acc, shown = replay("deepseek_cache_hit_length.txt", 5)
    assert shown == "Partial"
    assert acc.finish_reason == "length"
    assert (acc.usage.input_tokens, acc.usage.cached_tokens, acc.usage.output_tokens) == (900, 640, 2)


def test_kimi_usage_inside_the_choice():
    acc, _ = replay("kimi_usage_in_choice.txt")
    assert acc.saw_usage and acc.usage.input_tokens == 50 and acc.usage.output_tokens == 1


def test_parallel_tool_calls_assembled_by_index():
    acc, shown = replay("openai_parallel_tool_calls.txt", 3)
    result = acc.result()
    assert shown == ""
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_a", "search_knowledge", '{"query": "Kafka"}'),
        ("call_b", "check_availability", '{"language": "en"}'),
    ]
    assert result.finish_reason == "tool_calls"


def test_tool_calls_without_index_are_taken_in_order():
    acc, _ = replay("gemini_tool_calls_no_index.txt")
    result = acc.result()
    assert [(c.id, c.name) for c in result.tool_calls] == [("g1", "search_knowledge"), ("g2", "check_availability")]
    assert result.tool_calls[1].arguments == '{"language": "nl"}'
    assert result.finish_reason == "stop" and not acc.done  # Gemini sends no [DONE]


def test_refusal_and_content_filter():
    acc, shown = replay("openai_refusal.txt")
    assert shown == "" and acc.result().refusal == "I can't help with that."
    acc, shown = replay("content_filter.txt")
    assert shown == "Some" and acc.finish_reason == "content_filter"


def test_error_inside_the_stream_is_typed():
    with pytest.raises(ProviderError) as excinfo:
        replay("error_in_stream.txt")
    assert excinfo.value.code == "server_error" and excinfo.value.message == "overloaded"


def test_error_bodies_object_and_array():
    openai = error_from_body({"error": {"message": "The server had an error", "type": "server_error"}}, 500)
    assert (openai.code, openai.message, openai.retryable) == ("server_error", "The server had an error", True)
    gemini = error_from_body([{"error": {"code": 429, "message": "Resource has been exhausted",
                                         "status": "RESOURCE_EXHAUSTED"}}], 429)
    assert (gemini.code, gemini.retryable) == ("resource_exhausted", True)
    assert "exhausted" in gemini.message
    bad_request = error_from_body({"error": {"message": "bad model", "code": "model_not_found"}}, 404)
    assert not bad_request.retryable and bad_request.code == "model_not_found"


def test_garbage_chunk_is_a_typed_error():
    with pytest.raises(ProviderError, match="bad_stream"):
        StreamAccumulator().add("{not json")

"""Property-based tests (hypothesis) on what hostile input reaches first: the input guards, the
validation of frames and questions, and the SSE parser of provider streams (arbitrary bytes,
split at every position). No database: pure functions, many generated cases each."""

from __future__ import annotations

import codecs
import json

from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from chat.providers.base import ProviderError
from chat.providers.sse import SSEDecoder, StreamAccumulator
from chat.validation import MAX_DEPTH, frame_problem, question_problem
from guards.rules import contains_sensitive, mask_sensitive, screen
from tests.fakes.openai_server import sse_text

fuzz = hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NO_DIGITS = st.text(st.characters(exclude_categories=("Nd", "No", "Nl", "Cs")), max_size=60)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)


def luhn_completed(body: str) -> str:
    """``body`` with the check digit that makes it pass Luhn."""
    total = 0
    for position, digit in enumerate(reversed(body)):
        value = int(digit) * (2 if position % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return body + str((10 - total % 10) % 10)


def depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


# --- the input guards ------------------------------------------------------------------------

@fuzz
@given(st.text(max_size=300))
def test_the_guards_never_fail_refuse_what_they_would_mask_and_mask_stably(text):
    verdict = screen(text)
    assert verdict is None or verdict.guard
    if contains_sensitive(text):
        assert verdict is not None
    masked = mask_sensitive(text)
    assert mask_sensitive(masked) == masked


@fuzz
@given(NO_DIGITS, st.sampled_from([("4", 16), ("51", 16), ("35", 16), ("6011", 16), ("37", 15), ("36", 14)]),
       st.integers(0, 10**15), NO_DIGITS, st.sampled_from([" ", "-", "\u00a0", "\u200b"]))
def test_a_card_number_anywhere_is_refused_and_masked_away(before, scheme, number, after, separator):
    prefix, length = scheme  # a prefix and a length its scheme issues
    card = luhn_completed((prefix + str(number).zfill(length))[:length - 1])
    grouped = separator.join(card[i:i + 4] for i in range(0, length, 4))
    text = f"{before} {grouped} {after}"
    assert screen(text) is not None
    masked = mask_sensitive(text)
    assert card[:12] not in "".join(ch for ch in masked if ch.isdigit()) and not contains_sensitive(masked)


# --- frames and questions ----------------------------------------------------------------------

@fuzz
@given(st.one_of(st.text(max_size=400), JSON.map(json.dumps), st.integers(0, 60).map(lambda n: "[" * n + "]" * n)))
def test_a_frame_is_accepted_only_when_it_is_small_shallow_json(text):
    problem = frame_problem(text, None)
    if problem is None:
        assert len(text) <= settings.TWIN_MAX_FRAME_BYTES and depth(json.loads(text)) <= MAX_DEPTH
    else:
        assert problem[0] in {"bad_json", "too_deep", "frame_too_large"}
    assert frame_problem(None, text.encode("utf-8", "surrogatepass"))[0] == "bad_request"  # binary frames


@fuzz
@given(st.one_of(st.text(max_size=2100), JSON))
def test_an_accepted_question_is_clean_text(value):
    problem = question_problem(value)
    if problem is None:
        text = value.strip()
        assert isinstance(value, str) and text and len(text) <= settings.TWIN_MAX_QUESTION_CHARS
        text.encode("utf-8")  # no lone surrogates
        assert not any((ch < " " and ch not in "\n\t\r") or ch == "\x7f" for ch in text)
    else:
        assert problem[0] in {"empty_question", "too_long", "bad_unicode", "control_characters"}


# --- the SSE parser --------------------------------------------------------------------------

def events_of(*chunks: str) -> list[str]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.flush()


def decoded(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


@fuzz
@given(st.binary(max_size=200) | st.text(st.sampled_from("data: {}[]\"\\x\r\n:é"), max_size=120).map(str.encode))
def test_sse_events_do_not_depend_on_where_the_network_splits_the_bytes(raw):
    whole = events_of(decoded(raw))
    for cut in range(len(raw) + 1):
        # the bytes decoded as httpx does (a UTF-8 sequence may be split), the text fed in pieces
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pieces = [decoder.decode(raw[:cut]), decoder.decode(raw[cut:]), decoder.decode(b"", final=True)]
        assert events_of(*pieces) == whole


@fuzz
@given(st.lists(st.text(max_size=12), min_size=1, max_size=8), st.data())
def test_a_well_formed_stream_gives_the_same_answer_split_anywhere(pieces, data):
    stream = "".join(sse_text(*pieces))
    cut = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cut], [*cut, len(stream)], strict=True)]
    accumulator = StreamAccumulator()
    shown = "".join(accumulator.add(event) for event in events_of(*chunks))
    assert shown == accumulator.result().text == "".join(pieces) and accumulator.done


@fuzz
@given(st.one_of(st.text(max_size=200), JSON.map(json.dumps),
                 JSON.map(lambda v: json.dumps({"choices": v})),
                 JSON.map(lambda v: json.dumps({"choices": [{"delta": v, "finish_reason": v}], "usage": v})),
                 JSON.map(lambda v: json.dumps({"choices": [{"delta": {"content": v, "tool_calls": v}}]})),
                 JSON.map(lambda v: json.dumps({"choices": [{"delta": {"tool_calls": [v]}}]}))))
def test_any_provider_chunk_is_folded_or_refused_with_a_typed_error(payload):
    accumulator = StreamAccumulator()
    try:
        added = accumulator.add(payload)
    except ProviderError as exc:
        assert exc.code
        return
    assert isinstance(added, str)
    result = accumulator.result()
    assert isinstance(result.text, str) and all(isinstance(c.arguments, str) for c in result.tool_calls)

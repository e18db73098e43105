"""Validation of what a visitor sends, shared by the WebSocket and the HTTP API: each problem is
an error code and a message, found before anything is parsed deeply or stored."""

from __future__ import annotations

import json

from django.conf import settings

MAX_DEPTH = 4  # {"type": "ask", "text": "..."} needs 1


def _depth(text: str) -> int:
    """The deepest nesting of JSON arrays and objects, in one pass (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def frame_problem(text_data: str | None, bytes_data: bytes | None) -> tuple[str, str] | None:
    if text_data is None:
        return "bad_request", "Send text frames with JSON, not binary data."
    if len(text_data) > settings.TWIN_MAX_FRAME_BYTES:
        return "frame_too_large", f"Frames are limited to {settings.TWIN_MAX_FRAME_BYTES} characters."
    if _depth(text_data) > MAX_DEPTH:
        return "too_deep", "The frame is nested too deeply."
    try:
        json.loads(text_data)
    except (ValueError, RecursionError):
        return "bad_json", "Frames must be JSON objects."
    return None


def question_problem(text: object) -> tuple[str, str] | None:
    if not isinstance(text, str) or not text.strip():
        return "empty_question", "Ask a question."
    text = text.strip()
    if len(text) > settings.TWIN_MAX_QUESTION_CHARS:
        return "too_long", f"Questions are limited to {settings.TWIN_MAX_QUESTION_CHARS} characters."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "bad_unicode", "The question contains invalid characters (lone surrogates)."
    if any((ch < " " and ch not in "\n\t\r") or ch == "\x7f" for ch in text):
        return "control_characters", "The question contains control characters (only newlines and tabs are allowed)."
    return None

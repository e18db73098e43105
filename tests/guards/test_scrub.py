from __future__ import annotations

from guards.scrub import scrub


def test_secrets_and_numbers_are_scrubbed_everywhere_in_nested_data(settings):
    settings.TWIN_API_KEY = "configured-key-1234567890"
    data = {
        "headers": ["Authorization: Bearer abcdefghijklmnop.qrstuv"],
        "error": "401 for key sk-proj-AAAABBBBCCCCDDDDEEEE and AIzaSyA1234567890abcdefghijklmnopqrstu",
        "config": {"note": "api_key=hunter2hunter2", "used": "configured-key-1234567890"},
        "args": {"message": "pay NL91ABNA0417164300 or card 4111-1111-1111-1111", "count": 3},
    }
    clean = scrub(data)
    text = str(clean)
    for secret in ("abcdefghijklmnop", "sk-proj-AAAA", "AIzaSyA", "hunter2", "configured-key",
                   "NL91ABNA0417164300", "4111-1111-1111-1111"):
        assert secret not in text, secret
    assert clean["args"]["count"] == 3 and "[redacted ...4300]" in clean["args"]["message"]


def test_a_short_text_scrubbed_before_is_scrubbed_again_under_a_new_key(settings):
    """Short strings (a trace's stream chunks) are scrubbed once per process and key: the
    result of a text scrubbed under one key is not reused under another."""
    from guards.scrub import scrub_text

    settings.TWIN_API_KEY = "first-key-1234567"
    text = "auth with zz-second-key-7654321"
    assert scrub_text(text) == text
    settings.TWIN_API_KEY = "zz-second-key-7654321"
    assert scrub_text(text) == "auth with [redacted]"
    card = "card 4111 1111 1111 1111"
    assert scrub_text(card) == scrub_text(card) != card

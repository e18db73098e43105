"""django-ratelimit's counters in Postgres: atomic across processes (threads with their own
connections here), expiring, and the HTTP views limited through them."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.db import connection

from tests.concurrently import at_once

pytestmark = pytest.mark.django_db(transaction=True)


def test_add_incr_get_and_expiry():
    cache = caches["ratelimit"]
    assert cache.add("k", 1, 60) is True and cache.add("k", 1, 60) is False  # a live window is kept
    assert cache.incr("k") == 2 and cache.get("k") == 2
    assert cache.get("missing", 0) == 0
    with pytest.raises(ValueError):
        cache.incr("missing")
    cache.set("old", 5, 60)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE guards_cachecounter SET expires_at = now() - interval '1 second'")
    assert cache.get("old") is None and cache.add("old", 1, 60) is True  # a passed window starts anew
    assert cache.get("old") == 1 and cache.delete("old") and cache.get("old") is None


def test_concurrent_increments_lose_nothing():
    cache = caches["ratelimit"]
    cache.add("hot", 0, 60)

    def hit():
        for _ in range(5):
            cache.incr("hot")

    at_once(*[hit] * 20)
    assert cache.get("hot") == 100


def test_feedback_is_limited_per_address(settings):
    from django.test import Client

    from chat.models import Conversation, Message

    settings.TWIN_RATE_FEEDBACK = "2/10m"
    client = Client()
    client.post("/start/")
    client.cookies["csrftoken"] = "a" * 32
    answer = Message.objects.create(conversation=Conversation.objects.get(), role="assistant", content="An answer")
    statuses = [client.post("/api/feedback", {"message_id": answer.pk, "rating": 1}, content_type="application/json",
                            HTTP_X_CSRFTOKEN="a" * 32).status_code for _ in range(3)]
    assert statuses == [201, 200, 429]

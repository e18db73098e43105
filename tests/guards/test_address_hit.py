"""Every level of a limit in one round trip (``guards.limits.address_hit`` on ``incr_many``): the
same decisions and the same counters as the address's check and then its blocks' one by one,
in one statement; in Redis, one script."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext

from guards import limits
from tests.concurrently import at_once

pytestmark = pytest.mark.django_db(transaction=True)

# IPv4 addresses of two /24s and IPv6 /64s of two /56s of one /48: every level gets refusals
CLIENTS = [f"192.0.2.{n % 12}" for n in range(40)] + [f"198.51.100.{n}" for n in range(4)] + [
    f"2001:db8:5:{n % 3:x}{n % 5:02x}::1" for n in range(40)]


@pytest.fixture(autouse=True)
def one_window(monkeypatch):
    """django-ratelimit's clock stands still: each count reads one window (tests/guards/test_blocks.py)."""
    import types

    import django_ratelimit.core

    now = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", types.SimpleNamespace(time=lambda: now))


def one_by_one(kind: str, client: str) -> limits.Decision:
    decision = limits.visitor_hit(kind, ip_key=limits_key(client))
    return limits.block_hit(kind, client=client) if decision.allowed else decision


def limits_key(client: str) -> str:
    from chat.services import ip_hash

    return ip_hash(client)


def counters() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, value FROM guards_cachecounter")
        return dict(cursor.fetchall())


def incidents() -> list[tuple]:
    from guards.models import GuardIncident

    return sorted(GuardIncident.objects.values_list("rule", "ip_hash", "count"))


def test_the_same_decisions_and_counters_as_one_level_after_the_other(settings):
    settings.TWIN_RATE_TURNS = "2/10m"
    before = [one_by_one("turn", client) for client in CLIENTS]
    counted, refused = counters(), incidents()
    assert not all(d.allowed for d in before) and any(d.allowed for d in before)
    caches["ratelimit"].clear()
    from guards.models import GuardIncident

    GuardIncident.objects.all().delete()
    after = [limits.address_hit("turn", ip_key=limits_key(client), client=client) for client in CLIENTS]
    assert after == before
    assert counters() == counted  # a level after a refused one is not counted, as before
    assert incidents() == refused


def test_all_levels_are_one_statement(settings):
    settings.TWIN_RATE_TURNS = "2/10m"
    client = "2001:db8:6:100::1"  # the address, its /56 and its /48
    with CaptureQueriesContext(connection) as queries:
        assert limits.address_hit("turn", ip_key=limits_key(client), client=client).allowed
    assert len(queries) == 1
    assert sorted(counters().values()) == [1, 1, 1]


def test_a_passed_window_starts_at_one_and_concurrent_hits_lose_nothing(settings):
    settings.TWIN_RATE_TURNS = "1000/10m"
    cache = caches["ratelimit"]
    assert cache.incr_many([("a", 60, None), ("b", 60, None)]) == [1, 1]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE guards_cachecounter SET value = 50, expires_at = now() - interval '1 second' "
                       "WHERE key LIKE %s", ["%a"])
    assert cache.incr_many([("a", 60, None), ("b", 60, None)]) == [1, 2]
    assert cache.incr_many([("a", 60, 0), ("b", 60, None)]) == [2]  # over the first limit: b not counted

    def hit():
        for _ in range(5):
            cache.incr_many([("hot", 60, None), ("block", 60, None)])

    at_once(*[hit] * 10)
    assert cache.get("hot") == 50 and cache.get("block") == 50
    with pytest.raises(ValueError):
        cache.incr_many([("same", 60, None), ("same", 60, None)])


@pytest.mark.skipif(shutil.which("redis-server") is None,
                    reason="REDIS RATE-LIMIT TEST SKIPPED: no redis-server here (apt-get install redis-server)")
def test_with_redis_every_level_is_one_script_with_the_same_decisions(settings, tmp_path):
    from django.core.cache.backends.redis import RedisCache

    from guards.ratecache import RedisCounterCache

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        settings.TWIN_RATE_TURNS = "2/10m"
        location = f"redis://127.0.0.1:{port}/0"
        settings.CACHES = {**settings.CACHES, "ratelimit": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                                            "LOCATION": location}}
        caches["ratelimit"].clear()
        assert type(caches["ratelimit"]) is RedisCache  # Django's own: one level after the other
        before = [limits.address_hit("turn", ip_key=limits_key(c), client=c) for c in CLIENTS]
        caches["ratelimit"].clear()
        settings.CACHES = {**settings.CACHES, "ratelimit": {"BACKEND": "guards.ratecache.RedisCounterCache",
                                                            "LOCATION": location}}
        cache = caches["ratelimit"]
        assert isinstance(cache, RedisCounterCache)
        after = [limits.address_hit("turn", ip_key=limits_key(c), client=c) for c in CLIENTS]
        assert after == before and not all(d.allowed for d in after)
        assert cache.incr_many([("x", 60, 0), ("y", 60, None)]) == [1]  # y not counted after x's refusal
        assert cache.get("y") is None and cache.incr("x") == 2
    finally:
        caches["ratelimit"].close()
        server.terminate()
        server.wait(10)

"""Per-visitor limits that hold across processes: counters in Postgres, incremented atomically.

A sliding window approximated from two fixed windows (the previous one weighted by how much of
it still overlaps), so a burst at a window boundary cannot double the limit. One
``INSERT … ON CONFLICT … DO UPDATE … RETURNING`` per hit: no read-modify-write race between
processes (which a cache's get-then-set ``incr`` would have). Open sockets are rows with an
expiry, so a crashed process cannot hold a visitor's slots for ever.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction

from twinsite.env import parse_rate


@dataclass(frozen=True)
class Limit:
    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Limit:
        """``20/10m``, ``5/30s``, ``100/1h``, ``1000/1d``."""
        return cls(*parse_rate(text))


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int  # seconds, when not allowed


def hit(key: str, limit: Limit, *, now: float | None = None) -> Decision:
    """Count one event for ``key``; refuse when the sliding-window count is over the limit."""
    now = time.time() if now is None else now
    window = int(now // limit.seconds) * limit.seconds
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO guards_ratecounter (key, window_start, hits) VALUES (%s, %s, 1)
               ON CONFLICT (key, window_start) DO UPDATE SET hits = guards_ratecounter.hits + 1
               RETURNING hits,
                 (SELECT hits FROM guards_ratecounter WHERE key = %s AND window_start = %s)""",
            [key, window, key, window - limit.seconds],
        )
        current, previous = cursor.fetchone()
    overlap = 1 - (now - window) / limit.seconds
    if current + (previous or 0) * overlap <= limit.count:
        return Decision(True, 0)
    # an upper bound: by the end of this window the older one no longer counts
    return Decision(False, max(1, math.ceil(limit.seconds - (now - window))))


# The per-visitor limits and the setting that configures each: the one policy table. A turn is
# counted by ``visitor_hit`` (a sliding window in Postgres, shared by the socket and the HTTP
# API); the HTTP views' own limits by django-ratelimit (``http_hit`` and its decorator in
# chat.views), on CACHES["ratelimit"]: atomic across processes (guards.ratecache, or Redis).
RATES = {"turn": "TWIN_RATE_TURNS", "conversation": "TWIN_RATE_CONVERSATIONS", "login": "TWIN_RATE_LOGIN",
         "feedback": "TWIN_RATE_FEEDBACK"}


def rate(kind: str):
    """django-ratelimit's ``rate`` for ``kind``: read per request, so a changed setting counts."""
    def configured(group: str, request) -> str:
        return getattr(settings, RATES[kind])
    return configured


def http_hit(request, kind: str, *, ip_key: str) -> Decision:
    """Count one ``kind`` request of a visitor with django-ratelimit (where its decorator cannot
    go: the async API)."""
    from django_ratelimit.core import is_ratelimited

    if not is_ratelimited(request, group=kind, key=lambda group, request: ip_key, rate=rate(kind), increment=True):
        return Decision(True, 0)
    return http_refusal(request, kind, ip_key=ip_key)


def http_refusal(request, kind: str, *, ip_key: str) -> Decision:
    """A request django-ratelimit found over ``kind``'s limit (``request.limited``): how long to
    wait, and the refusal counted as a guard incident (one row per address and window)."""
    from django_ratelimit.core import get_usage

    from guards.services import incident_count

    usage = get_usage(request, group=kind, key=lambda group, request: ip_key, rate=rate(kind), increment=False)
    incident_count(guard="rate_limit", rule=f"{kind}s_per_ip", ip_hash=ip_key,
                   window_seconds=Limit.parse(getattr(settings, RATES[kind])).seconds)
    return Decision(False, max(1, usage["time_left"] if usage else 1))


def visitor_hit(kind: str, *, ip_key: str, conversation_id: str | None = None) -> Decision:  # a turn
    """Count one ``kind`` event (turn, conversation, login) of a visitor, by hashed address,
    against its configured limit; refusals are counted as one guard incident per address, kind
    and window of the limit (guards.services.incident_count), not one row each."""
    limit = Limit.parse(getattr(settings, RATES[kind]))
    decision = hit(f"{kind}:{ip_key}", limit)
    if not decision.allowed:
        from guards.services import incident_count

        incident_count(guard="rate_limit", rule=f"{kind}s_per_ip", ip_hash=ip_key, window_seconds=limit.seconds,
                       conversation_id=conversation_id)
    return decision


def socket_register(*, key: str, socket_id: str, maximum: int, ttl: int = 3600) -> bool:
    """Register an open socket for ``key``; False (and nothing registered) when ``maximum`` are open."""
    with transaction.atomic(), connection.cursor() as cursor:
        # serialised per key: parallel connects cannot all see room for one more
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"twinsite-sockets:{key}"])
        cursor.execute("DELETE FROM guards_opensocket WHERE key = %s AND expires_at < now()", [key])
        cursor.execute(
            """INSERT INTO guards_opensocket (socket_id, key, expires_at)
               SELECT %s, %s, now() + make_interval(secs => %s)
               WHERE (SELECT count(*) FROM guards_opensocket WHERE key = %s AND expires_at >= now()) < %s""",
            [socket_id, key, ttl, key, maximum],
        )
        return cursor.rowcount == 1


def socket_seen(*, socket_id: str, ttl: int = 3600) -> None:
    """Keep an open socket counted (called on each of its turns)."""
    with connection.cursor() as cursor:
        cursor.execute("UPDATE guards_opensocket SET expires_at = now() + make_interval(secs => %s) "
                       "WHERE socket_id = %s", [ttl, socket_id])


def socket_closed(*, socket_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM guards_opensocket WHERE socket_id = %s", [socket_id])


def counters_purge(*, older_than: int = 2 * 86400) -> int:
    from guards.ratecache import expired_purge

    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM guards_ratecounter WHERE window_start < %s", [int(time.time()) - older_than])
        return cursor.rowcount + expired_purge()

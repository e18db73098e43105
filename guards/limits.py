"""Per-visitor limits that hold across processes, on one counter: django-ratelimit's, on
``CACHES["ratelimit"]`` (guards.ratecache: atomic ``add``/``incr`` in Postgres; Django's Redis cache
when ``REDIS_URL`` is set). Turns (socket and API), new conversations and feedback
all count there, each by the visitor's hashed address, through ``address_hit`` (the address and
its blocks in one round trip: ``incr_many``).

django-ratelimit's windows are fixed, each key's shifted by a hash of the key: a visitor who
spends a whole limit at the end of one window and again at the start of the next gets twice the
limit once. The daily budget is the hard cap behind every limit. Open sockets are rows with an
expiry, so a crashed process cannot hold a visitor's slots for ever.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from django.conf import settings
from django.db import connection, transaction

from twinsite.clientip import address_hash, blocks_of
from twinsite.env import parse_rate

_FUDGE = 5  # seconds a counter outlives its window (django-ratelimit's EXPIRATION_FUDGE)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int  # seconds, when not allowed


# The per-visitor limits and the setting that configures each: the one policy table.
# (The admin login's failures count apart, in guards/login.py.)
RATES = {"turn": "TWIN_RATE_TURNS", "conversation": "TWIN_RATE_CONVERSATIONS", "feedback": "TWIN_RATE_FEEDBACK"}


def rate(kind: str):
    """django-ratelimit's ``rate`` for ``kind``: read per request, so a changed setting counts."""
    def configured(group: str, request) -> str:
        return getattr(settings, RATES[kind])
    return configured


def visitor_hit(kind: str, *, ip_key: str, request=None, conversation_id: str | None = None) -> Decision:
    """Count one ``kind`` event of a visitor (by hashed address) against its configured limit,
    where django-ratelimit's decorator cannot go (the socket, the async API); ``request`` is the
    HTTP request when there is one (django-ratelimit marks it ``limited``). A refusal is counted
    as one guard incident per address, kind and window (guards.services.incident_count)."""
    from django_ratelimit.core import get_usage

    usage = get_usage(request if request is not None else SimpleNamespace(), group=kind,
                      key=lambda group, request: ip_key, rate=rate(kind), increment=True)
    if usage is None or not usage["should_limit"]:
        return Decision(True, 0)
    return _refused(kind, ip_key=ip_key, time_left=usage["time_left"], conversation_id=conversation_id)


def address_hit(kind: str, *, ip_key: str, client: str = "", request=None,
                conversation_id: str | None = None) -> Decision:
    """``visitor_hit`` and then ``block_hit`` (with ``client``), in one round trip: the address and
    each of its blocks counted by one statement (``incr_many`` of ``CACHES["ratelimit"]``), a
    level counted only while those before it are within their limits, as the two calls count.
    The first level over its limit refuses, as it would have."""
    from django_ratelimit import ALL
    from django_ratelimit.core import _get_window, _make_cache_key
    from django_ratelimit.core import time as clock

    cache = _cache()
    if not getattr(settings, "RATELIMIT_ENABLE", True) or not hasattr(cache, "incr_many"):
        decision = visitor_hit(kind, ip_key=ip_key, request=request, conversation_id=conversation_id)
        if decision.allowed and client:
            decision = block_hit(kind, client=client, conversation_id=conversation_id)
        return decision
    count, seconds = parse_rate(getattr(settings, RATES[kind]))
    levels = [(kind, count, seconds, ip_key, "")] + [
        (f"{kind}:block", count * factor, seconds, address_hash(block), f"{kind}s_per_block")
        for block, factor in (blocks_of(client) if client else [])]
    windows = [_get_window(value, period) for _, _, period, value, _ in levels]
    counted = cache.incr_many([
        (_make_cache_key(group, window, f"{limit}/{period}s", value, ALL), period + _FUDGE, limit)
        for (group, limit, period, value, _), window in zip(levels, windows, strict=True)])
    for (_, limit, _, value, rule), window, hits in zip(levels, windows, counted, strict=False):
        if hits > limit:
            return _refused(kind, ip_key=value, time_left=window - int(clock.time()),
                            conversation_id=conversation_id, rule=rule)
    return Decision(True, 0)


def _cache():
    from django.core.cache import caches

    return caches[getattr(settings, "RATELIMIT_USE_CACHE", "default")]


def block_hit(kind: str, *, client: str, conversation_id: str | None = None) -> Decision:
    """Count one ``kind`` event against each block of the client's address (its IPv6 /56 and /48,
    its IPv4 /24: ``TWIN_RATE_BLOCKS``), each at its multiple of the address's limit. One
    subscriber rotating through the /64s of its /56, or a renter through a /48, meets one limit."""
    from django_ratelimit.core import get_usage

    count, seconds = parse_rate(getattr(settings, RATES[kind]))
    for block, factor in blocks_of(client):
        key = address_hash(block)
        usage = get_usage(SimpleNamespace(), group=f"{kind}:block", key=lambda group, request, k=key: k,
                          rate=f"{count * factor}/{seconds}s", increment=True)
        if usage is not None and usage["should_limit"]:
            return _refused(kind, ip_key=key, time_left=usage["time_left"], conversation_id=conversation_id,
                            rule=f"{kind}s_per_block")
    return Decision(True, 0)


def http_refusal(request, kind: str, *, ip_key: str) -> Decision:
    """A request django-ratelimit's decorator found over ``kind``'s limit (``request.limited``):
    how long to wait, and the refusal counted as a guard incident."""
    from django_ratelimit.core import get_usage

    usage = get_usage(request, group=kind, key=lambda group, request: ip_key, rate=rate(kind), increment=False)
    return _refused(kind, ip_key=ip_key, time_left=usage["time_left"] if usage else 1)


def _refused(kind: str, *, ip_key: str, time_left: int, conversation_id: str | None = None,
             rule: str = "") -> Decision:
    from guards.services import incident_count

    incident_count(guard="rate_limit", rule=rule or f"{kind}s_per_ip", ip_hash=ip_key,
                   window_seconds=parse_rate(getattr(settings, RATES[kind]))[1], conversation_id=conversation_id)
    return Decision(False, max(1, time_left))


def turn_slot(*, ip_key: str, slot: str, client: str = "") -> bool:
    """Hold one of the address's ``TWIN_MAX_TURNS_PER_IP`` running-turn slots (a row like an open
    socket's, expiring after the turn deadline if its process dies), and one in each block of
    ``client`` (its IPv6 /56 and /48, its IPv4 /24) at that block's multiple
    (``TWIN_RATE_BLOCKS``): a /48 cannot start its whole burst at once from its /64s. False, and
    nothing held, when any of them is full."""
    ttl = int(settings.TWIN_TURN_DEADLINE) + 60
    maximum = settings.TWIN_MAX_TURNS_PER_IP
    holds = [(f"turns:{ip_key}", slot, maximum)] + [
        (f"turns:{address_hash(block)}", f"{slot}:{n}", maximum * factor)
        for n, (block, factor) in enumerate(blocks_of(client), start=1)]
    with transaction.atomic(), connection.cursor() as cursor:
        # serialised per key as in socket_register, every key of the turn's in one statement: taken
        # in the target list's order, narrowest first, in every process (no deadlock)
        cursor.execute("SELECT " + ", ".join(["pg_advisory_xact_lock(hashtext(%s))"] * len(holds)),
                       [f"twinsite-sockets:{key}" for key, _, _ in holds])
        # then, seeing what those keys' holders committed, all the slots or none
        wanted = ", ".join(["(%s, %s, %s::int)"] * len(holds))
        cursor.execute(
            f"""WITH want (socket_id, key, most) AS (VALUES {wanted}),
                 gone AS (DELETE FROM guards_opensocket WHERE key IN (SELECT key FROM want) AND expires_at < now())
               INSERT INTO guards_opensocket (socket_id, key, expires_at)
               SELECT socket_id, key, now() + make_interval(secs => %s) FROM want
               WHERE NOT EXISTS (SELECT 1 FROM want AS w WHERE w.most <= (
                   SELECT count(*) FROM guards_opensocket AS o WHERE o.key = w.key AND o.expires_at >= now()))""",
            [*(value for key, socket_id, most in holds for value in (socket_id, key, most)), ttl])
        return cursor.rowcount == len(holds)


def turn_slot_free(*, slot: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM guards_opensocket WHERE socket_id = %s OR socket_id LIKE %s",
                       [slot, f"{slot}:%"])


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


def counters_purge() -> int:
    """Delete the counters whose window has passed (the worker's purge)."""
    from guards.ratecache import expired_purge

    return expired_purge()

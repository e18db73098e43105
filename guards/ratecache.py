"""A cache backend for django-ratelimit that is atomic across processes, on the Postgres every
process already shares (``CACHES["ratelimit"]`` when ``REDIS_URL`` is unset; with Redis,
Django's own Redis cache).

django-ratelimit counts with ``add`` (start a window's counter) and ``incr`` (count one more).
Django's database cache does both as read-then-write, so two processes can lose a hit (its
check ``django_ratelimit.E003`` says so); here each is one statement: ``INSERT … ON CONFLICT``
for ``add``, ``UPDATE … RETURNING`` for ``incr``. It holds counters only: the values are
integers, nothing else is stored.

``incr_many`` counts several keys (every level of a limit: the address, its /56, /48 or /24) in
one round trip, each as ``add`` then ``incr`` would: in Postgres one statement of chained
``INSERT … ON CONFLICT … DO UPDATE … RETURNING``, in Redis (``RedisCounterCache``) one script.
A key is counted only while every key before it stayed within its limit, as the checks one after
the other counted them (guards.limits).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.redis import RedisCache
from django.db import connection
from django.utils import timezone

_TABLE = "guards_cachecounter"
# One level of a chain: (key, timeout in seconds, limit). The next level is counted only while
# this one's count stays within its limit (None: whatever it is).
Level = tuple[str, int, int | None]


class CounterCache(BaseCache):
    def __init__(self, location: str, params: dict) -> None:
        super().__init__(params)

    def _expiry(self, timeout) -> dt.datetime:
        seconds = self.default_timeout if timeout is DEFAULT_TIMEOUT else (timeout or 86_400 * 365)
        return timezone.now() + dt.timedelta(seconds=seconds)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        """Set ``key`` unless it holds a live value; whether it was set."""
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {_TABLE} (key, value, expires_at) VALUES (%s, %s, %s)
                    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
                    WHERE {_TABLE}.expires_at < now()""",
                [key, int(value), self._expiry(timeout)])
            return cursor.rowcount == 1

    def incr(self, key, delta=1, version=None) -> int:
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {_TABLE} SET value = value + %s WHERE key = %s AND expires_at >= now() "
                           "RETURNING value", [int(delta), key])
            row = cursor.fetchone()
        if row is None:
            raise ValueError(f"Key '{key}' not found")
        return row[0]

    def incr_many(self, levels: Sequence[Level], version=None) -> list[int]:
        """Count one hit on each key in order, each started at 1 when it holds no live window
        (``add(key, 1, timeout)``, else ``incr(key)``), in one statement; the counts of the keys
        counted: a key after one over its limit is not counted (the list ends there)."""
        keys = [self.make_and_validate_key(key, version=version) for key, _, _ in levels]
        if len(set(keys)) != len(keys):  # one statement cannot update a row twice
            raise ValueError("incr_many: a key appears twice")
        parts, params = [], []
        for n, (key, (_, timeout, _)) in enumerate(zip(keys, levels, strict=True)):
            source = "VALUES (%s, 1, %s)" if n == 0 else f"SELECT %s, 1, %s FROM k{n - 1} WHERE k{n - 1}.value <= %s"
            params += [key, self._expiry(timeout)]
            if n:
                previous = levels[n - 1][2]
                params.append(previous if previous is not None else 2**62)
            parts.append(f"""k{n} AS (INSERT INTO {_TABLE} AS c (key, value, expires_at) {source}
                ON CONFLICT (key) DO UPDATE SET
                    value = CASE WHEN c.expires_at < now() THEN 1 ELSE c.value + 1 END,
                    expires_at = CASE WHEN c.expires_at < now() THEN EXCLUDED.expires_at ELSE c.expires_at END
                RETURNING value)""")
        counts = ", ".join(f"(SELECT value FROM k{n})" for n in range(len(keys)))
        with connection.cursor() as cursor:
            cursor.execute(f"WITH {', '.join(parts)} SELECT {counts}", params)
            row = cursor.fetchone()
        return [value for value in row if value is not None] if row else []

    def get(self, key, default=None, version=None):
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT value FROM {_TABLE} WHERE key = %s AND expires_at >= now()", [key])
            row = cursor.fetchone()
        return default if row is None else row[0]

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None) -> None:
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(
                f"""INSERT INTO {_TABLE} (key, value, expires_at) VALUES (%s, %s, %s)
                    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at""",
                [key, int(value), self._expiry(timeout)])

    def delete(self, key, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {_TABLE} WHERE key = %s", [key])
            return cursor.rowcount == 1

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {_TABLE} SET expires_at = %s WHERE key = %s AND expires_at >= now()",
                           [self._expiry(timeout), key])
            return cursor.rowcount == 1

    def clear(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {_TABLE}")


# KEYS: the counters; ARGV: per key its timeout, then its limit (-1: none). Counts each as SET NX
# then INCR would, and stops after the first over its limit.
_CHAIN = """
local counts = {}
for i, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'NX', 'EX', ARGV[2 * i - 1])
  local count = redis.call('INCR', key)
  counts[i] = count
  local limit = tonumber(ARGV[2 * i])
  if limit >= 0 and count > limit then break end
end
return counts
"""


class RedisCounterCache(RedisCache):
    """Django's Redis cache with ``incr_many``: every level of a limit in one round trip (a
    script, so that a level after one over its limit is not counted, as with Postgres)."""

    def incr_many(self, levels: Sequence[Level], version=None) -> list[int]:
        keys = [self.make_and_validate_key(key, version=version) for key, _, _ in levels]
        args: list[int] = []
        for _, timeout, limit in levels:
            args += [max(1, int(timeout)), -1 if limit is None else int(limit)]
        client = self._cache.get_client(keys[0], write=True)
        return [int(count) for count in client.eval(_CHAIN, len(keys), *keys, *args)]


def expired_purge() -> int:
    """Delete counters whose window has passed (the worker's purge)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TABLE} WHERE expires_at < now()")
        return cursor.rowcount

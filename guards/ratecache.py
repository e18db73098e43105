"""A cache backend for django-ratelimit that is atomic across processes, on the Postgres every
process already shares (``CACHES["ratelimit"]`` when ``REDIS_URL`` is unset; with Redis,
Django's own Redis cache).

django-ratelimit counts with ``add`` (start a window's counter) and ``incr`` (count one more).
Django's database cache does both as read-then-write, so two processes can lose a hit (its
check ``django_ratelimit.E003`` says so); here each is one statement: ``INSERT … ON CONFLICT``
for ``add``, ``UPDATE … RETURNING`` for ``incr``. It holds counters only: the values are
integers, nothing else is stored.
"""

from __future__ import annotations

import datetime as dt

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.db import connection
from django.utils import timezone

_TABLE = "guards_cachecounter"


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


def expired_purge() -> int:
    """Delete counters whose window has passed (the worker's purge)."""
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_TABLE} WHERE expires_at < now()")
        return cursor.rowcount

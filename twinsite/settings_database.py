"""``DATABASES["default"]`` for settings.py, from ``DATABASE_URL`` or the embedded server.

A module of its own so settings.py stays a flat list of settings; it reads the environment
the same way (``twinsite.env``) and fails the same way (``ImproperlyConfigured``).
"""

from __future__ import annotations

from urllib.parse import urlparse

import psycopg
from django.core.exceptions import ImproperlyConfigured
from psycopg.conninfo import conninfo_to_dict

from twinsite import pgserver
from twinsite.env import env_int, env_secret
from twinsite.pool_checks import check_if_idle


def database_from_env() -> dict:
    """Django's settings for the one database: ``DATABASE_URL``, else the embedded Postgres."""
    url = env_secret("DATABASE_URL")
    if not url:
        lay = pgserver.layout()
        if not lay.password_file.exists():
            # Not started yet (e.g. `manage.py check` on a fresh clone): settings still load;
            # connecting will fail with a clear message from start-up scripts instead.
            url = f"postgresql://{pgserver.SUPERUSER}:@127.0.0.1:{lay.port}/twinsite"
        else:
            url = pgserver.database_url(lay)
    shape = "DATABASE_URL must look like postgresql://user:password@host:5432/dbname?sslmode=require"
    if urlparse(url).scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(shape)
    try:
        # libpq's own parser: percent-decoding, IPv6 hosts, ?host=/socket/dir, and every query
        # parameter (sslmode, sslrootcert, options, connect_timeout...) kept; unknown ones refused.
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ImproperlyConfigured(f"{shape}; {exc}") from None
    if not params.get("dbname"):
        raise ImproperlyConfigured(shape)
    fields = {"NAME": "dbname", "USER": "user", "PASSWORD": "password", "HOST": "host", "PORT": "port"}
    database = {key: str(params.pop(name, "")) for key, name in fields.items()}
    # The rest goes to psycopg as is, here and to the checkpointer's, lock and layer connections
    # (twinsite.db.conninfo).
    # Django's psycopg pool, one per process: every thread that touches the ORM borrows a
    # connection for a request or a call and gives it back, so a process never holds more than
    # TWIN_DB_POOL_SIZE. (Persistent connections were one per thread, and under ASGI each HTTP
    # request runs in a thread of its own: 200 page loads left ~200 idle connections behind.)
    # A thread that waits over 3 s for one (Postgres away, or the pool all lent) gets OperationalError:
    # the 503 of chat.outage, within daphne's 5 s WebSocket handshake.
    # reconnect_timeout: the pool gives up reconnecting (with growing back-off) after 2 s, so once
    # Postgres is back the next request connects at once instead of after the back-off's 30 s+.
    # check: a connection is checked (an empty query) only when it sat unlent for a couple of
    # seconds, not at every lending (twinsite.pool_checks).
    pool = {"min_size": 2, "max_size": env_int("TWIN_DB_POOL_SIZE", 20, minimum=2, maximum=500),
            "timeout": 3.0, "max_idle": 300.0, "reconnect_timeout": 2.0, "check": check_if_idle}
    return database | {"ENGINE": "django.db.backends.postgresql", "CONN_HEALTH_CHECKS": True, "CONN_MAX_AGE": 0,
                       "OPTIONS": {"application_name": "twinsite", "pool": pool} | params}

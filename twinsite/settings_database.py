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
    # Persistent connections, one per database thread (twinsite/db.py), checked before reuse.
    return database | {"ENGINE": "django.db.backends.postgresql", "CONN_HEALTH_CHECKS": True,
                       "CONN_MAX_AGE": env_int("TWIN_DB_CONN_MAX_AGE", 300, minimum=0),
                       "OPTIONS": {"application_name": "twinsite"} | params}

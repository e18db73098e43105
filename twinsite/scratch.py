"""A scratch database beside the configured one (``<name>_<suffix>``): benchmarks, and evals of
another owner's knowledge (``evals.owners``)."""

from __future__ import annotations

import os
from urllib.parse import urlparse, urlunparse

import psycopg


def scratch_url(suffix: str, *, fresh: bool = False) -> str:
    """The scratch database's URL, created (empty first when ``fresh``) with pgvector."""
    from twinsite import pgserver

    parsed = urlparse(os.environ.get("DATABASE_URL") or pgserver.database_url())
    name = f"{parsed.path.lstrip('/')}_{suffix}"
    with psycopg.connect(urlunparse(parsed._replace(path="/postgres")), autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    url = urlunparse(parsed._replace(path=f"/{name}"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def drop(url: str) -> None:
    parsed = urlparse(url)
    with psycopg.connect(urlunparse(parsed._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parsed.path.lstrip("/")}" WITH (FORCE)')

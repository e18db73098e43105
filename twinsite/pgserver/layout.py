"""Where the embedded Postgres keeps its data, log and password: ``var/`` and the port, from the
environment (``TWIN_VAR_DIR``, ``TWIN_PG_PORT``, ``TWIN_VAR_MIN_FREE_MB``).

Part of ``twinsite.pgserver``, which re-exports these names. Like it, this module runs before
settings can be loaded: it reads the environment with ``twinsite.env``, which needs no settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from twinsite.env import env_int

BASE_DIR = Path(__file__).resolve().parents[2]  # the project: twinsite/pgserver/layout.py
DEFAULT_PORT = 54329


@dataclass(frozen=True)
class Layout:
    var: Path
    port: int
    min_free_mb: int = 100  # below this much free disk the server is not started

    @property
    def pgdata(self) -> Path:
        return self.var / "pgdata"

    @property
    def logfile(self) -> Path:
        return self.var / "postgres.log"

    @property
    def password_file(self) -> Path:
        return self.var / "pg-password"


def layout() -> Layout:
    var = Path(os.environ.get("TWIN_VAR_DIR", BASE_DIR / "var")).resolve()
    try:
        port = env_int("TWIN_PG_PORT", DEFAULT_PORT, minimum=1024, maximum=65535)
        min_free_mb = env_int("TWIN_VAR_MIN_FREE_MB", 100, minimum=0)
    except ImproperlyConfigured as exc:
        raise SystemExit(str(exc)) from None
    return Layout(var=var, port=port, min_free_mb=min_free_mb)

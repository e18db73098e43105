"""Where the embedded Postgres keeps its data, log and password: ``var/`` and the port, from the
environment (``TWIN_VAR_DIR``, ``TWIN_PG_PORT``, ``TWIN_VAR_MIN_FREE_MB``).

Part of ``twinsite.pgserver``, which re-exports these names. Like it, this module must not
import Django: it runs before settings can be loaded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
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
    raw = os.environ.get("TWIN_PG_PORT", "").strip() or str(DEFAULT_PORT)
    try:
        port = int(raw)
    except ValueError:
        raise SystemExit(f"TWIN_PG_PORT must be an integer, got {raw!r}") from None
    if not 1024 <= port <= 65535:
        raise SystemExit(f"TWIN_PG_PORT must be between 1024 and 65535, got {port}")
    raw = os.environ.get("TWIN_VAR_MIN_FREE_MB", "").strip() or "100"
    if not raw.isdigit():
        raise SystemExit(f"TWIN_VAR_MIN_FREE_MB must be a whole number of megabytes, got {raw!r}")
    return Layout(var=var, port=port, min_free_mb=int(raw))

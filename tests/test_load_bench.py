"""A smoke run of the load benchmark (benchmarks/load.py): tiny counts, no timing assertions.
It proves the harness runs end to end (daphne, real WebSockets, the fake model on loopback,
the direct path beside) and that every turn completes without an error."""

from __future__ import annotations

import pytest
from django.db import connection

from benchmarks import load

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_load_harness_runs_both_paths_without_errors(kb):
    sd = connection.settings_dict
    url = f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/{sd['NAME']}"
    chosen = {k: v for k, v in load.scenarios(smoke=True).items() if k in ("one", "ten", "refused")}
    # two serving processes (visitors take them in turn), then a soak of two rounds of 2 x 2 turns
    results = load.run(url, chosen, first_token_ms=50, token_ms=2, processes=2, soak_turns=8, soak_round=(2, 2))
    for name, result in results["scenarios"].items():
        assert result["full"]["errors"] == 0 and result["full"]["turns"] >= 1, name
        assert result["full"]["ttft_ms"]["p50"] is not None, name
    assert results["scenarios"]["one"]["per_turn"]["model_calls"] == 1.0  # answered from the prompt's knowledge
    assert results["scenarios"]["refused"]["per_turn"]["model_calls"] == 0  # refused before any model call
    assert "direct" in results["scenarios"]["one"] and "overhead_ttft_ms" in results["scenarios"]["one"]
    assert "| one (1x2, fake) | full |" in load.table(results)
    assert results["scenarios"]["ten"]["processes"] == 2 and len(results["rss_mb_end"]["fake"]) == 2
    soak = results["soak"]
    assert soak["turns"] == 8 and [s["turns"] for s in soak["samples"]] == [0, 4, 8]
    assert all(s["errors"] == 0 for s in soak["samples"])
    assert soak["samples"][-1]["db_connections"].get("twinsite", 0) >= 1  # Django's pool, by name
    assert isinstance(soak["rss_growth_pct"], float)

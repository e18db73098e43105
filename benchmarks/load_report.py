"""The load benchmark's numbers (``benchmarks/load.py``): each turn's sample, percentiles, the
summary of a run and the Markdown tables printed at the end."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Sample:
    ttft: float | None
    done: float
    ok: bool
    error: str = ""


@dataclass
class Result:
    samples: list[Sample] = field(default_factory=list)
    wall: float = 0.0

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)


def pct(values: list[float], p: float) -> float | None:
    """The ``p``-th percentile of ``values`` (seconds), interpolated, in milliseconds."""
    if not values:
        return None
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return round((values[lo] + (values[hi] - values[lo]) * (k - lo)) * 1000, 1)


def summary(result: Result) -> dict:
    ttft = [s.ttft for s in result.samples if s.ttft is not None and s.ok]
    done = [s.done for s in result.samples if s.ok]
    return {
        "turns": len(result.samples), "errors": sum(not s.ok for s in result.samples),
        "error_codes": sorted({s.error for s in result.samples if s.error}),
        "ttft_ms": {"p50": pct(ttft, 50), "p95": pct(ttft, 95), "p99": pct(ttft, 99)},
        "done_ms": {"p50": pct(done, 50), "p95": pct(done, 95), "p99": pct(done, 99)},
        "turns_per_s": round(len(result.samples) / result.wall, 2) if result.wall else None,
    }


def table(results: dict) -> str:
    lines = ["| scenario | path | turns | errors | TTFT p50/p95/p99 ms | done p50/p95/p99 ms | turns/s |",
             "|---|---|---|---|---|---|---|"]
    for name, res in results["scenarios"].items():
        for path in ("direct", "full"):
            if path not in res:
                continue
            s = res[path]
            lines.append(f"| {name} ({res['visitors']}x{res['turns_per_visitor']}, {res['provider']}) | {path} | "
                         f"{s['turns']} | {s['errors']} | {s['ttft_ms']['p50']} / {s['ttft_ms']['p95']} / "
                         f"{s['ttft_ms']['p99']} | {s['done_ms']['p50']} / {s['done_ms']['p95']} / "
                         f"{s['done_ms']['p99']} | {s['turns_per_s']} |")
    lines += ["", "| scenario | TTFT overhead p50/p95 ms | full/direct p50 | model calls | db xacts | db conns opened"
              " | checkpoint rows | daphne CPU ms | postgres CPU ms | RSS MB before→after |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, res in results["scenarios"].items():
        o, p, r = res.get("overhead_ttft_ms") or {}, res["per_turn"], res["rss_mb"]
        lines.append(f"| {name} | {o.get('p50', '-')} / {o.get('p95', '-')} | {res.get('ratio_ttft_p50', '-')} | "
                     f"{p['model_calls']} | {p['db_transactions']} | {p['db_connections_opened']} | "
                     f"{p['checkpoint_rows']} | {p['daphne_cpu_ms']} | {p['postgres_cpu_ms']} | "
                     f"{r['before']}→{r['after']} |")
    return "\n".join(lines)

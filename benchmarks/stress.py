"""Stress benchmark: many slow turns at once against one serving process.

The fake model on loopback answers each call only after ``--model-wait`` seconds (20 by default),
so every turn is still waiting on the model when the next visitors ask. For each step of
``--visitors`` (50 and 200 by default), that many visitors, each its own conversation and client
address (a trusted proxy header), connect and ask one question at the same moment. While they
wait, Postgres is sampled every 0.25 s for the daphne process's connections (by
``application_name``: Django's threads, the checkpointer's pool, the lock connection, the channel
layer). Reported per step: answers, refusals by code and how fast each came, connections at
their highest, and whether any visitor hung (no ``done`` or ``error`` by the model's wait plus
60 s).

Usage: ``python -m benchmarks.stress [--visitors 50,200] [--model-wait 20] [--json PATH]``.
Runs in its own database (``<name>_stress``, dropped afterwards). Figures in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import websockets

from benchmarks.harness import ROOT, FakeModel, Server
from benchmarks.load import NotStarted, chat_socket
from benchmarks.load_report import pct
from twinsite.scratch import drop, scratch_url

QUESTION = "What has she built?"


class ConnectionSampler:
    """Postgres connections to the benchmark's database, by application name, every ``every`` s."""

    def __init__(self, url: str, every: float = 0.25) -> None:
        self.url, self.every = url, every
        self.highest: Counter = Counter()
        self.highest_total = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ConnectionSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True, application_name="stress-sampler") as conn:
            while not self._stop.is_set():
                rows = conn.execute(
                    "SELECT coalesce(nullif(application_name, ''), '(django)'), count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    " AND application_name <> 'stress-sampler' GROUP BY 1").fetchall()
                counts = Counter(dict(rows))
                for name, count in counts.items():
                    self.highest[name] = max(self.highest[name], count)
                self.highest_total = max(self.highest_total, sum(counts.values()))
                self._stop.wait(self.every)


@dataclass
class Crowd:
    """One step's visitors: they connect, then all ask at once when the last one is in."""

    size: int
    wait_s: float
    start: asyncio.Event = field(default_factory=asyncio.Event)
    results: list[dict] = field(default_factory=list)
    settled: int = 0  # connected or failed

    def settle(self) -> None:
        self.settled += 1
        if self.settled == self.size:
            self.start.set()


async def visitor(base: str, number: int, crowd: Crowd) -> None:
    ip = f"10.{number // 250 % 250}.{number % 250}.{9 + number // 62500}"
    record: dict = {"outcome": None, "code": None, "seconds": None}
    crowd.results.append(record)
    connected = False
    try:
        async with chat_socket(base, ip, wait_s=120) as ws:
            connected = True
            crowd.settle()
            await crowd.start.wait()  # everyone asks at once
            began = time.perf_counter()
            await ws.send(json.dumps({"type": "ask", "text": QUESTION}))
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), timeout=crowd.wait_s + 60))
                if event["type"] == "error":
                    record["code"] = event["code"]
                    if not event.get("in_turn"):
                        break
                if event["type"] == "done":
                    record["outcome"] = event["outcome"]
                    break
            record["seconds"] = time.perf_counter() - began
    except NotStarted as exc:
        record["code"] = exc.code
    except TimeoutError:
        record["code"] = "hung"
    except (OSError, httpx.HTTPError, websockets.WebSocketException) as exc:
        record["code"] = type(exc).__name__
    finally:
        if not connected:
            crowd.settle()


async def step(base: str, visitors: int, offset: int, wait_s: float) -> list[dict]:
    crowd = Crowd(visitors, wait_s)
    await asyncio.gather(*(visitor(base, offset + n, crowd) for n in range(visitors)))
    return crowd.results


def report(visitors: int, results: list[dict], sampler: ConnectionSampler, wall: float, limit: int) -> dict:
    answered = [r["seconds"] for r in results if r["outcome"] and not r["code"]]
    refused = [r["seconds"] for r in results if r["code"] == "overloaded"]
    return {
        "visitors": visitors, "process_turns_limit": limit, "wall_s": round(wall, 1),
        "answered": len(answered), "outcomes": dict(Counter(r["outcome"] for r in results if r["outcome"])),
        "codes": dict(Counter(r["code"] for r in results if r["code"])),
        "hung": sum(r["code"] == "hung" for r in results),
        "answer_s": {"p50": _s(pct(answered, 50)), "max": _s(pct(answered, 100))},
        "overloaded_ms": {"p50": pct(refused, 50), "p95": pct(refused, 95), "max": pct(refused, 100)},
        "connections_highest": dict(sampler.highest), "connections_highest_total": sampler.highest_total,
    }


def _s(ms: float | None) -> float | None:
    return None if ms is None else round(ms / 1000, 1)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visitors", default="50,200")
    parser.add_argument("--model-wait", type=float, default=20.0)
    parser.add_argument("--process-turns", type=int, default=0, help="TWIN_PROCESS_TURNS (0: the default)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    url = scratch_url("stress", fresh=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")} | {"DATABASE_URL": url, "DEBUG": "1"}
    for command in (["migrate", "--noinput", "-v", "0"], ["sync_knowledge"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
    logs = ROOT / "var" / "bench-logs"
    logs.mkdir(parents=True, exist_ok=True)
    model = FakeModel(int(args.model_wait * 1000), 10)
    provider = {"TWIN_PROVIDER": "openai_compatible", "TWIN_BASE_URL": model.url, "TWIN_MODEL": "bench",
                "TWIN_API_KEY": "x"}
    if args.process_turns:
        provider["TWIN_PROCESS_TURNS"] = str(args.process_turns)
    results: dict = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "model_wait_s": args.model_wait,
                     "steps": []}
    server = Server(url, provider, logs / "daphne-stress.log")
    try:
        limit = int(provider.get("TWIN_PROCESS_TURNS", 100))
        asyncio.run(step(server.base, 1, 900_000, args.model_wait))  # warm: models, pools
        server.wait_idle()
        for n, visitors in enumerate(int(v) for v in args.visitors.split(",")):
            with ConnectionSampler(url) as sampler:
                began = time.perf_counter()
                out = asyncio.run(step(server.base, visitors, n * 1000, args.model_wait))
                wall = time.perf_counter() - began
            results["steps"].append(report(visitors, out, sampler, wall, limit))
            print(json.dumps(results["steps"][-1]), file=sys.stderr)
        results["rss_mb_end"] = round(server.rss_mb(), 1)
    finally:
        server.stop()
        model.close()
        drop(url)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()

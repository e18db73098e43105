"""What the load benchmarks run against: a fake OpenAI-compatible model on loopback, daphne
servers started as separate processes, and Postgres' own figures (CPU, transactions, rows).
``benchmarks.load``, ``stress``, ``turn_sql`` and ``turn_cpu`` share them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import psycopg

from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text

ROOT = Path(__file__).resolve().parent.parent
ANSWER_WORDS = ("She built the booking API of a freight company in Python and PostgreSQL , handling "
                "around 40,000 bookings a month , and designed its event pipeline on Kafka").split()
CITATION = " [source: Curriculum Vitae]"


# --- the fake model ------------------------------------------------------------------------------

class FakeModel:
    """The project's fake OpenAI-compatible server (tests/fakes/openai_server.py) with fixed
    behaviour: ``ANSWER_WORDS`` and a citation, the first after ``first_token_ms``, then one per
    ``token_ms``; usage last."""

    def __init__(self, first_token_ms: int, token_ms: int) -> None:
        pieces = [w + " " for w in ANSWER_WORDS] + [CITATION]
        reply = Reply(chunks=sse_text(*pieces), wait=first_token_ms / 1000, delay=token_ms / 1000)
        self.fake = FakeOpenAI(brain=lambda body: reply).__enter__()
        self.url = self.fake.base_url

    @property
    def requests(self) -> int:
        return len(self.fake.requests)

    def close(self) -> None:
        self.fake.__exit__(None, None, None)


# --- the database and the server -------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """daphne on a free port with the given provider, against the load database."""

    def __init__(self, url: str, provider: dict[str, str], log: Path) -> None:
        self.port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")} | {
            "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "twinsite.settings", "DEBUG": "1",
            "TWIN_TRUSTED_PROXIES": "1", "TWIN_DAILY_BUDGET_USD": "100000",
            "TWIN_BUDGET_CONVERSATION_SHARE": "1", "TWIN_BUDGET_IP_SHARE": "1",
            "TWIN_RATE_CONVERSATIONS": "1000/10m", "LOG_LEVEL": "WARNING", **provider,
        }
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "twinsite.asgi:application"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/api/health", timeout=30).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError(log.read_text())
            time.sleep(0.3)
        self.ps = psutil.Process(self.process.pid)

    @property
    def base(self) -> str:
        return f"127.0.0.1:{self.port}"

    def rss_mb(self) -> float:
        return self.ps.memory_info().rss / 2**20

    def cpu_s(self) -> float:
        times = self.ps.cpu_times()
        return times.user + times.system

    def thread_cpu_s(self) -> dict[int, float]:
        """CPU seconds (user + system) of each of the process's threads, by native thread id."""
        return {t.id: t.user_time + t.system_time for t in self.ps.threads()}

    def thread_names(self) -> dict[int, str]:
        """Native thread id -> Python thread name, from ``py-spy dump`` (``{}`` without py-spy);
        threads Python did not start (libgomp's, OpenBLAS') have no name there."""
        spy = Path(sys.executable).with_name("py-spy")
        if not spy.exists():
            return {}
        out = subprocess.run([str(spy), "dump", "--nonblocking", "--pid", str(self.process.pid)],
                             check=False, capture_output=True, text=True, timeout=60).stdout
        return {int(m[1]): m[2] for m in re.finditer(r'^Thread (\d+) \([^)]*\): "([^"]*)"', out, re.MULTILINE)}

    def wait_idle(self, timeout: float = 120) -> None:
        """Until the process uses under 5% of a core for a second (the start-up warm-up thread
        embeds the guard's exemplars in the background)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = self.cpu_s()
            time.sleep(1.0)
            if self.cpu_s() - before < 0.05:
                return

    def profile(self, out: Path) -> subprocess.Popen | None:
        """py-spy sampling this server into ``out`` (collapsed stacks) until the returned process is
        interrupted; None without py-spy (``pip install py-spy``: a benchmark tool, not a requirement)."""
        spy = Path(sys.executable).with_name("py-spy")
        if not spy.exists():
            print("py-spy is not installed: no profile", file=sys.stderr)
            return None
        return subprocess.Popen([str(spy), "record", "--format", "raw", "--rate", "200", "--nonblocking",
                                 "--pid", str(self.process.pid), "--output", str(out)],
                                stdout=subprocess.DEVNULL, stderr=out.with_suffix(".log").open("w"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def postgres_cpu_s() -> float:
    total = 0.0
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] in ("postgres", "postmaster"):
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
    return total


def db_counters(url: str) -> dict:
    with psycopg.connect(url, autocommit=True) as conn:
        xact, sessions = conn.execute(
            "SELECT xact_commit + xact_rollback, sessions FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        writes = conn.execute("SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM checkpoint_writes)"
                              " + (SELECT count(*) FROM checkpoint_blobs)").fetchone()[0]
        turns = conn.execute("SELECT count(*) FROM chat_turnlog").fetchone()[0]
    return {"transactions": xact, "sessions": sessions, "checkpoint_rows": writes, "turns": turns}

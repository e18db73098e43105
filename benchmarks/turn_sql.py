"""Where a turn's database work goes: ``python -m benchmarks.turn_sql [--provider fake|offline] [--turns 6]``.

Runs ``--turns`` questions one after another in one conversation through ``turn_run`` (after one
warm-up turn) with Postgres logging every statement of the configured database
(``ALTER DATABASE ... SET log_statement = 'all'``, reset afterwards), then reads the server's log
(``var/postgres.log`` of the embedded server, or ``--log``) and prints per turn: transactions
(an explicit BEGIN, or a statement outside one), statements, connection-pool health checks (an
empty query each) and the statements a turn runs most often. Needs the embedded server (or a
server logging to a file you name) and a synced knowledge base (``make bootstrap``). Not part of
``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import time
from pathlib import Path

_LINE = re.compile(r"^\S+ \S+ \S+ \[(\d+)\] (?:\S+ )?LOG:  (?:statement|execute [^:]*): (.*)$")
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d ")
_NUMBERS = re.compile(r"'[^']*'|\b\d+\b|\$\d+")


def shape(sql: str) -> str:
    """A statement without its literals, cut to its first 90 characters."""
    return re.sub(r"\s+", " ", _NUMBERS.sub("?", sql)).strip()[:90]


def read(log: Path, start: int, end: int) -> list[tuple[str, str]]:
    with log.open("rb") as handle:
        handle.seek(start)
        lines = handle.read(end - start).decode("utf-8", errors="replace").splitlines()
    out: list[list[str]] = []
    current = None
    for line in lines:
        if _STAMP.match(line):
            match = _LINE.match(line)
            current = [match.group(1), match.group(2)] if match else None
            if current:
                out.append(current)
        elif current is not None:  # a statement's next line
            current[1] += " " + line.strip()
    return [(pid, sql.strip()) for pid, sql in out]


def transactions(statements: list[tuple[str, str]]) -> int:
    """BEGIN ... COMMIT/ROLLBACK blocks per session, plus every statement outside one. An upper
    bound: statements a client pipelines run in one implicit transaction, which the log cannot
    show (the checkpoint's blob and row upserts), so ``main`` also reports Postgres' own count."""
    open_in: set[str] = set()
    count = 0
    for pid, sql in statements:
        if not sql:
            continue  # an empty query: a connection pool's health check, no transaction
        word = sql.split(None, 1)[0].upper()
        if word in ("BEGIN", "START"):
            open_in.add(pid)
            count += 1
        elif word in ("COMMIT", "ROLLBACK", "END"):
            open_in.discard(pid)
        elif pid not in open_in:
            count += 1
    return count


QUESTIONS = ["What has she built?", "Where has she worked?", "Which stack does she use?",
             "Wat is haar dagtarief?", "Is she available in March?", "What did she write about?"]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", choices=["fake", "offline"], default="fake")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--log", default="var/postgres.log")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--sequence", action="store_true", help="also list the last turn's statements in order")
    return parser.parse_args()


def _committed() -> int:
    """Postgres' own count of this database's committed transactions (statistics flushed first;
    the probe's own transactions are not counted by the caller's difference)."""
    import psycopg

    from twinsite.db import conninfo

    with psycopg.connect(conninfo(), autocommit=True) as probe:
        probe.execute("SELECT pg_stat_force_next_flush()")
        time.sleep(1.1)  # the statistics of other sessions reach shared memory within a second
        probe.execute("SELECT pg_stat_clear_snapshot()")
        return probe.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
                             ).fetchone()[0]


async def _turns(args: argparse.Namespace, log: Path, marks: dict[str, int]) -> None:
    """A warm-up turn, then ``args.turns`` turns, with the log's size (and the commit count) at each mark."""
    from chat.checkpoints import close_pools
    from chat.services import conversation_create
    from chat.turns.run import turn_run
    from twinsite.db import database_sync_to_async

    async def emit(event: dict) -> None:
        pass

    conversation = await database_sync_to_async(conversation_create)()
    await turn_run(conversation_id=conversation.pk, text="What kind of work does she do?", emit=emit,
                   visitor_ip="10.9.9.9")  # warm: models, pools, the knowledge prefix
    await close_pools()  # new connections read the database's log_statement
    marks["start"] = os.path.getsize(log)  # noqa: ASYNC240 (a stat, once, in a benchmark)
    await turn_run(conversation_id=conversation.pk, text=QUESTIONS[0], emit=emit, visitor_ip="10.9.9.9")
    marks["first"] = os.path.getsize(log)  # noqa: ASYNC240 -- the first turn after the reset pays for new connections
    marks["commits_first"] = await asyncio.to_thread(_committed)
    for turn in range(1, args.turns):
        marks["last"] = os.path.getsize(log)  # noqa: ASYNC240
        await turn_run(conversation_id=conversation.pk, text=QUESTIONS[turn % len(QUESTIONS)], emit=emit,
                       visitor_ip="10.9.9.9")
    await asyncio.sleep(0.5)  # the server's last lines
    marks["end"] = os.path.getsize(log)  # noqa: ASYNC240 -- before the RESET is logged


def _measure(args: argparse.Namespace, log: Path) -> dict[str, int]:
    """The turns with every statement of this database logged (``log_statement = all``, reset after)."""
    import psycopg
    from django.db import connection

    from twinsite.db import conninfo

    database = connection.settings_dict["NAME"]
    with psycopg.connect(conninfo(), autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{database}" SET log_statement = \'all\'')
    connection.close()
    marks: dict[str, int] = {}
    try:
        asyncio.run(_turns(args, log, marks))
        marks["commits"] = _committed()
    finally:
        with psycopg.connect(conninfo(), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{database}" RESET log_statement')
    return marks


def _report(args: argparse.Namespace, log: Path, marks: dict[str, int]) -> None:
    steady = read(log, marks["first"], marks["end"])
    turns = args.turns - 1
    checks = sum(not sql for _, sql in steady)
    print(f"{args.provider}: {turns} turns after the first: {transactions(steady) / turns:.1f} transactions, "
          f"{(len(steady) - checks) / turns:.1f} statements and {checks / turns:.1f} pool health checks per turn "
          f"(first turn: {transactions(read(log, marks['start'], marks['first']))} transactions, new connections)")
    # each probe adds its own transactions (two statements, autocommit) besides the turns'
    print(f"Postgres' own count (pg_stat_database.xact_commit, pipelined statements as one): "
          f"{(marks['commits'] - marks['commits_first'] - 3) / turns:.1f} committed transactions per turn")
    counts = collections.Counter(shape(sql) for _, sql in steady if sql)
    print("| statements a turn | statement |\n|---|---|")
    for sql, count in counts.most_common(args.top):
        print(f"| {count / turns:.1f} | `{sql}` |")
    if args.sequence and "last" in marks:
        print("\nThe last turn's statements in order (session, statement; a blank one is a health check):")
        for pid, sql in read(log, marks["last"], marks["end"]):
            print(f"{pid} {shape(sql) or '(health check)'}")


def main() -> None:
    args = _arguments()
    from benchmarks.harness import FakeModel

    model = FakeModel(300, 10)
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "twinsite.settings", "TWIN_DAILY_BUDGET_USD": "100000", "LOG_LEVEL": "WARNING",
        "TWIN_PROVIDER": "offline" if args.provider == "offline" else "openai_compatible",
        "TWIN_BASE_URL": model.url, "TWIN_MODEL": "bench", "TWIN_API_KEY": "x",
    })
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    try:
        marks = _measure(args, Path(args.log))
    finally:
        model.close()
    _report(args, Path(args.log), marks)


if __name__ == "__main__":
    main()

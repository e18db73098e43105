"""Knowledge benchmark: sync and search on a generated corpus (default 10,000 chunks).

Runs in its own database (``<name>_bench`` on the same server), so development data is left
alone. Usage: ``make bench`` or ``python -m benchmarks.knowledge_bench [--chunks N] [--keep]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from twinsite.scratch import drop, scratch_url

if TYPE_CHECKING:
    from knowledge.embedders import Embedder

WORDS = (
    "postgres django python kafka latency replication index vector queue migration schema tenant "
    "billing invoice cluster pipeline deploy rollback cache session websocket stream budget guard "
    "citation retrieval embedding evaluation recall metric dashboard bicycle utrecht delft railway "
    "container booking capacity wagon triage summary practice patient ledger journal balance audit "
    "fiets drukte voorspelling gemeente opdracht tarief beschikbaar werkwijze opleiding project"
).split()
TOPICS = ["Architecture", "Results", "Lessons", "Stack", "Team", "Timeline", "Risks", "Numbers",
          "Operations", "Testing", "Security", "Costs", "Users", "Design", "Migration", "Monitoring",
          "Data model", "Performance", "Roadmap", "Retrospective"]
QUERIES = [
    "How did she reduce latency of the booking service?", "Welke projecten gebruiken Kafka?",
    "What was the result of the migration?", "Hoeveel kost een opdracht?", "Which stack did the team use?",
    "How were risks handled during the rollout?", "Wat voorspelt het fietsdashboard?",
    "Tell me about the billing pipeline", "What did she learn from the railway project?",
    "Hoe werd de performance gemeten?",
]


# A Zipf-distributed vocabulary, as in real text: a few words are everywhere, most are rare.
VOCABULARY = WORDS + [f"{stem}{n}" for n in range(60) for stem in ("term", "naam", "tool", "plek")]
ZIPF_WEIGHTS = [1.0 / rank for rank in range(1, len(VOCABULARY) + 1)]


def sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, weights=ZIPF_WEIGHTS, k=9)
    year, amount = rng.randint(2015, 2026), rng.randint(2, 900)
    return f"{words[0].capitalize()} {' '.join(words[1:])} in {year} with {amount} units."


def generate(root: Path, chunks: int, per_file: int = 20, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    files = []
    for number in range(max(1, chunks // per_file)):
        lines = [f"---\ntitle: Generated document {number:05d}\nkind: project\nlang: en\n---",
                 sentence(rng)]
        for section in range(per_file - 1):
            lines.append(f"\n## {TOPICS[section % len(TOPICS)]} {section}\n"
                         + " ".join(sentence(rng) for _ in range(rng.randint(2, 4))))
        path = root / f"doc-{number:05d}.md"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(path)
    return files


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    args = parser.parse_args()

    url = scratch_url("bench")
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    os.environ.setdefault("DEBUG", "1")  # a development run
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from knowledge.embedders import get_embedders

    call_command("migrate", verbosity=0)
    embedders = get_embedders()
    for embedder in embedders:
        embedder.passages(["warm up"])  # model loading is not sync time
    print(f"embedders: {', '.join(e.name for e in embedders)}; cpu: {os.cpu_count()} cores")
    try:
        with tempfile.TemporaryDirectory() as folder:
            rows = bench_sync(Path(folder), args.chunks, embedders)
            bench_search(embedders, rows, args.searches)
    finally:
        connection.close()
        if not args.keep:
            drop(url)
    return 0


# The benchmark's steps import Django's models locally: main sets the database URL and runs
# django.setup() first, so none of them can be imported at the top of this module.

def bench_sync(root: Path, chunks: int, embedders: list[Embedder]) -> int:
    """A full sync of a generated corpus of ``chunks`` chunks under ``root``, then an incremental one
    after changing one file; prints both and returns the number of rows."""
    from knowledge.models import KnowledgeChunk
    from knowledge.services import knowledge_sync

    files = generate(root, chunks)
    KnowledgeChunk.objects.all().delete()
    started = time.perf_counter()
    report = knowledge_sync(root=root, embedders=embedders)
    full = time.perf_counter() - started
    rows = KnowledgeChunk.objects.count()
    print(f"full sync: {report.added} chunks x {len(embedders)} models ({rows} rows) in {full:.1f}s "
          f"({full / max(report.added, 1) * 1000:.1f} ms/chunk)")

    target = files[len(files) // 2]
    text = target.read_text(encoding="utf-8").replace(" units.", " units, revised.", 3)
    target.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    report = knowledge_sync(root=root, embedders=embedders)
    incremental = time.perf_counter() - started
    print(f"incremental sync after changing one file: {report.changed + report.added} chunks re-embedded "
          f"per model ({report.embedded} embeddings), {report.unchanged} unchanged, in {incremental:.2f}s")
    return rows


def bench_search(embedders: list[Embedder], rows: int, searches: int) -> None:
    """``searches`` queries: the time to embed each, then of the hybrid search alone; prints p50 and p95."""
    from django.db import connection

    from knowledge.embedders import embed_query
    from knowledge.search import knowledge_search

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_knowledgechunk")
    queries = [QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}")
               for i in range(searches)]
    embed_times, vectors = [], []
    for query in queries:
        started = time.perf_counter()
        vectors.append(embed_query(embedders, query))
        embed_times.append((time.perf_counter() - started) * 1000)
    for query, vector in zip(queries[:10], vectors[:10], strict=True):  # warm caches
        knowledge_search(query, embedders=embedders, query_vectors=vector)
    search_times = []
    for query, vector in zip(queries, vectors, strict=True):
        started = time.perf_counter()
        knowledge_search(query, embedders=embedders, query_vectors=vector)
        search_times.append((time.perf_counter() - started) * 1000)
    print(f"query embedding ({len(embedders)} models): p50 {statistics.median(embed_times):.1f} ms, "
          f"p95 {percentile(embed_times, 0.95):.1f} ms")
    print(f"hybrid search over {rows} rows, excluding embedding ({searches} queries): "
          f"p50 {statistics.median(search_times):.1f} ms, p95 {percentile(search_times, 0.95):.1f} ms")


if __name__ == "__main__":
    sys.exit(main())

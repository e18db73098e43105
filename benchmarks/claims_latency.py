"""How long the claim check takes per answer of five cited sentences:
``.venv/bin/python -m benchmarks.claims_latency [--answers 200] [--streamed 100]``.

Answers are made of five claims of the development set (``evals/data/claims.jsonl``) about the
sample owner, each citing its document, taken in turn; the documents' sentences are embedded first,
as a serving process does when it starts (``knowledge.claims.warm``). Measured, on this process's
CPU, no database:
- *cold*: one ``knowledge.claims.check`` per answer, no claim embedded before (each claim its
  words do not place in its document is embedded, one at a time, then compared): the CPU the
  check costs;
- *after the stream* (``--streamed TOKENS_PER_SECOND``): the answer is fed to
  ``knowledge.claims.vectors.Prefetch`` four characters at a time at that rate (a token is about
  four characters), as ``generate`` does while a model streams, and the check runs when the last
  characters arrived: what the visitor waits for after the last token.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument("--streamed", type=float, default=0.0, metavar="TOKENS_PER_SECOND",
                        help="also measure the check after streaming each answer at this rate")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    import django

    django.setup()
    from evals.owners import owner_get
    from knowledge import claims
    from knowledge.claims import figures, vectors
    from knowledge.content import read_folder
    from knowledge.embedders import get_embedder

    embedder = get_embedder()
    owner = owner_get("sample")
    sources = {d.title: claims.Source(d.title, d.body) for d in read_folder(owner.knowledge)}
    claims.warm(list(sources.values()), embedder)
    rows = [json.loads(line) for line in (BASE_DIR / "evals" / "data" / "claims.jsonl").read_text().splitlines()]
    cited = [f"{r['claim']} [source: {r['title']}]" for r in rows if r["owner"] == "sample" and r["title"] in sources]
    answers = [" ".join(cited[(i * 5 + k) % len(cited)] for k in range(5)) for i in range(args.answers)]
    claims.check(answers[0], sources, embedder, owner.name)  # the model's first call
    took = []
    for answer in answers:
        vectors.forget()
        start = time.perf_counter()
        claims.check(answer, sources, embedder, owner.name)
        took.append((time.perf_counter() - start) * 1000)
    _report("cold", took, embedder.name)
    if args.streamed:
        took = []
        for answer in answers[:max(1, len(answers) // 2)]:
            vectors.forget()
            prefetch = vectors.Prefetch(embedder, claims.claim_texts, figures.warm_units)
            for at in range(0, len(answer), 4):
                time.sleep(1 / args.streamed)
                prefetch.feed(answer[at:at + 4])
            start = time.perf_counter()
            claims.check(answer, sources, embedder, owner.name)
            took.append((time.perf_counter() - start) * 1000)
        _report(f"after streaming at {args.streamed:g} tokens/s", took, embedder.name)
    return 0


def _report(what: str, took: list[float], model: str) -> None:
    took.sort()
    print(f"{what}: {len(took)} answers of five cited sentences: p50 {statistics.median(took):.1f} ms, "
          f"p95 {took[int(0.95 * len(took)) - 1]:.1f} ms, max {took[-1]:.1f} ms ({model})")


if __name__ == "__main__":
    raise SystemExit(main())

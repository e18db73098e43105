"""Measure the guards, the SSE parser and whole offline turns against the shared corpora.

The corpora are read where they lie (default ``../shared/corpora``), never copied into the
project. Usage: ``python -m benchmarks.measure_corpora [--corpora DIR] [--turns]``; ``--turns``
runs every corpus question through the real graph with the offline provider (a few minutes;
it writes conversations to the configured database).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure_guards(corpora: Path) -> None:
    from guards.rules import screen

    injections = load(corpora / "injections.dev.jsonl")
    blocked = [row for row in injections if screen(row["text"])]
    per_lang = collections.Counter(row["lang"] for row in injections)
    caught = collections.Counter(row["lang"] for row in blocked)
    print(f"injections blocked: {len(blocked)}/{len(injections)} "
          f"({', '.join(f'{lang} {caught[lang]}/{n}' for lang, n in per_lang.most_common())})")
    benign = load(corpora / "benign.dev.jsonl")
    false_positives = [row for row in benign if screen(row["text"])]
    tricky = sum(1 for row in benign if row.get("tricky"))
    print(f"benign blocked: {len(false_positives)}/{len(benign)} "
          f"(tricky {sum(1 for r in false_positives if r.get('tricky'))}/{tricky})")
    numbers = load(corpora / "numbers.dev.jsonl")
    wrong = []
    for row in numbers:
        verdict = screen(row["text"])
        if (verdict is not None and verdict.guard in ("card_number", "iban")) != row["should_block"]:
            wrong.append(row)
    print(f"numbers judged as labelled: {len(numbers) - len(wrong)}/{len(numbers)}"
          + "".join(f"\n  differs: {r.get('kind')} (should_block={r['should_block']})" for r in wrong))


def measure_sse(corpora: Path) -> None:
    from chat.providers.base import ProviderError
    from chat.providers.sse import SSEDecoder, StreamAccumulator, error_from_body

    for path in sorted((corpora / "sse").glob("*.txt")):
        body = path.read_text(encoding="utf-8")
        if body.startswith("HTTP/"):
            head, _, payload = body.partition("\n\n")
            error = error_from_body(json.loads(payload), int(head.split()[1]))
            print(f"{path.name}: error {error.code}, retryable={error.retryable}")
            continue
        results = []
        for size in (len(body), 3):
            decoder, acc = SSEDecoder(), StreamAccumulator()
            try:
                for start in range(0, len(body), size):
                    for payload in decoder.feed(body[start:start + size]):
                        acc.add(payload)
                for payload in decoder.flush():
                    acc.add(payload)
            except ProviderError as exc:
                results.append(f"error {exc.code}")
                continue
            r = acc.result()
            results.append((r.text, r.refusal, [(c.name, c.arguments) for c in r.tool_calls], r.finish_reason,
                            vars(r.usage)))
        same = "same in 3-char pieces" if results[0] == results[1] else "DIFFERS in 3-char pieces"
        text, refusal, calls, finish, usage = results[0]
        print(f"{path.name}: {len(text)} chars, refusal {len(refusal)} chars, calls {[n for n, _ in calls]}, "
              f"finish {finish}, usage {usage}; {same}")


async def _turns(rows: list[dict]) -> tuple[collections.Counter, collections.Counter]:
    from channels.db import database_sync_to_async

    from chat.checkpoints import close_pools
    from chat.providers import get_provider
    from chat.services import conversation_create
    from chat.turns.run import turn_run

    async def ignore(event: dict) -> None:
        return None

    outcomes, tricky = collections.Counter(), collections.Counter()
    for row in rows:
        conversation = await database_sync_to_async(conversation_create)()
        result = await turn_run(conversation_id=conversation.pk, text=row["text"], emit=ignore,
                                provider=get_provider("offline"))
        outcomes[result.outcome] += 1
        if row.get("tricky"):
            tricky[result.outcome] += 1
    await close_pools()
    return outcomes, tricky


def measure_turns(corpora: Path) -> None:
    for name in ("benign", "injections"):
        outcomes, tricky = asyncio.run(_turns(load(corpora / f"{name}.dev.jsonl")))
        print(f"offline turns on {name}: {dict(outcomes)}" + (f" (tricky: {dict(tricky)})" if tricky else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=BASE_DIR.parent / "shared" / "corpora")
    parser.add_argument("--turns", action="store_true", help="also run every question through the graph")
    args = parser.parse_args()
    if not args.corpora.is_dir():
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    os.environ.setdefault("DEBUG", "1")  # a development run
    import django

    django.setup()
    measure_guards(args.corpora)
    measure_sse(args.corpora)
    if args.turns:
        measure_turns(args.corpora)
    return 0


if __name__ == "__main__":
    sys.exit(main())

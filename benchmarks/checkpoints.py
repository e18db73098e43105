"""Checkpoint growth: what LangGraph's checkpoint tables take per turn, and what a purge gives back.

Runs ``--turns`` questions (default 10) in one new conversation through the real graph with the
offline provider, prints the conversation's checkpoint rows and bytes after each turn, then
deletes the conversation through ``chat.lifecycle`` and prints what that reclaimed. Needs a
synced knowledge base (``make bootstrap``). Usage: ``python -m benchmarks.checkpoints [--turns N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

QUESTIONS = [
    "What has she built?", "Tell me about her projects.", "Which languages does she work in?",
    "Welke projecten heeft ze gedaan?", "What is her day rate?", "Is she available next month?",
    "What did she do with Kafka?", "Where did she study?", "Wat is haar ervaring met Django?",
    "How does she work with teams?",
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    os.environ.setdefault("DEBUG", "1")  # a development run
    import django

    django.setup()
    from asgiref.sync import sync_to_async

    from chat.checkpoints import close_pools
    from chat.lifecycle import checkpoint_stats, conversation_delete, human_bytes
    from chat.providers import get_provider
    from chat.services import conversation_create
    from chat.turns.run import turn_run

    conversation = conversation_create()
    provider = get_provider("offline")

    async def ignore(event: dict) -> None:
        pass

    async def run() -> None:
        previous = 0
        try:
            for number in range(1, args.turns + 1):
                question = QUESTIONS[(number - 1) % len(QUESTIONS)]
                result = await turn_run(conversation_id=conversation.pk, text=question, emit=ignore,
                                        provider=provider)
                stats = await sync_to_async(checkpoint_stats)(conversation_ids=[conversation.pk])
                rows = {name: count for name, (count, _) in stats.per_table.items()}
                print(f"turn {number:>2} ({result.outcome:<9}) rows {stats.rows:>4}  "
                      f"total {human_bytes(stats.bytes):>9}  this turn +{human_bytes(stats.bytes - previous):>9}  "
                      f"(writes {rows['checkpoint_writes']}, blobs {rows['checkpoint_blobs']}, "
                      f"checkpoints {rows['checkpoints']})")
                previous = stats.bytes
        finally:
            await close_pools()

    asyncio.run(run())
    before = checkpoint_stats()
    report = conversation_delete(conversation_id=conversation.pk)
    after = checkpoint_stats()
    print(f"deleted: {report}")
    print(f"all checkpoints: {before.rows} -> {after.rows} rows, {human_bytes(before.bytes)} -> "
          f"{human_bytes(after.bytes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

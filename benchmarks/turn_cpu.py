"""CPU per turn, in-process: ``python -m benchmarks.turn_cpu [--provider offline|fake] [--visitors 30]``.

Concurrent visitors (3 turns each) through ``turn_run`` in one process, with the fake model of
``benchmarks.load`` for ``fake``; prints wall time and process CPU per turn. Uses the configured
database (the dev one under ``make run``): it writes conversations there.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", choices=["fake", "offline"], default="fake")
    parser.add_argument("--visitors", type=int, default=30)
    args = parser.parse_args()
    from benchmarks.harness import FakeModel

    model = FakeModel(300, 10)
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "twinsite.settings", "TWIN_DAILY_BUDGET_USD": "100000",
        "TWIN_BUDGET_CONVERSATION_SHARE": "1", "TWIN_BUDGET_IP_SHARE": "1", "LOG_LEVEL": "WARNING",
        "TWIN_PROVIDER": "offline" if args.provider == "offline" else "openai_compatible",
        "TWIN_BASE_URL": model.url, "TWIN_MODEL": "bench", "TWIN_API_KEY": "x",
    })
    import django

    django.setup()
    from chat.services import conversation_create
    from chat.turns.run import turn_run
    from twinsite.db import database_sync_to_async

    questions = ["What has she built?", "Where has she worked?", "Which stack does she use?", "Wat is haar dagtarief?"]

    async def visitor(number: int, turns: int = 3) -> None:
        conversation = await database_sync_to_async(conversation_create)()

        async def emit(event: dict) -> None:
            pass

        for turn in range(turns):
            await turn_run(conversation_id=conversation.pk, text=questions[(number + turn) % 4], emit=emit,
                           visitor_ip=f"10.0.{number % 250}.{1 + number // 250}")

    async def run() -> None:
        await visitor(9_999, 2)  # warm: models, pools, the knowledge prefix
        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(visitor(n) for n in range(args.visitors)))
        turns = args.visitors * 3
        print(f"{args.provider}: {turns} turns, wall {time.perf_counter() - wall:.1f} s, "
              f"CPU {(time.process_time() - cpu) * 1000 / turns:.1f} ms per turn (this process, fake model included)")

    asyncio.run(run())
    model.close()


if __name__ == "__main__":
    main()

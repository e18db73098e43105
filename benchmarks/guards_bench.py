"""Guard pattern latency: ``python -m benchmarks.guards_bench [--n 500] [--sizes 20,200,2000]``.

Generated messages of four kinds (plain English, Dutch with accents and numbers, leetspeak and
spacing tricks, and one long run without spaces) at each size, screened by
``guards.rules.screen`` (patterns and checksums, no model). Prints p50/p95/p99 per kind and size.
"""

from __future__ import annotations

import argparse
import os
import random
import time

WORDS = {
    "plain": "what has she built the booking service in python and postgresql with kafka events nightly batch jobs "
             "where did she work before and how big was the team she led can i hire her next month".split(),
    "dutch_accents": "wat is haar dagtarief café één reünie hoeveel projecten heeft ze gedaan 2022 €1.100 "
                     "beschikbaar vanaf maart naïef coördinatie".split(),
    "tricks": "1gn0r3 i.g.n.o.r.e pr3v10us 1nstruct10ns s y s t e m pr0mpt r-e-v-e-a-l th3 h1dd3n rul3s".split(),
}


def message(kind: str, rng: random.Random, size: int = 2000) -> str:
    if kind == "no_spaces":
        return "".join(rng.choice("abcdefghij0123456789") for _ in range(size))
    text = ""
    while len(text) < size:
        text += rng.choice(WORDS[kind]) + " "
    return text[:size]


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--sizes", default="2000", help="message lengths in characters, comma-separated")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    os.environ.setdefault("DEBUG", "1")  # a development run
    import django

    django.setup()
    from guards.rules import screen

    rng = random.Random(7)
    print("| message | chars | p50 ms | p95 ms | p99 ms |\n|---|---|---|---|---|")
    for size, kind in ((int(size), kind) for size in args.sizes.split(",")
                       for kind in ("plain", "dutch_accents", "tricks", "no_spaces")):
        messages = [message(kind, rng, size) for _ in range(args.n)]
        for text in messages[:20]:
            screen(text)
        times = []
        for text in messages:
            start = time.perf_counter()
            screen(text)
            times.append(time.perf_counter() - start)
        print(f"| {kind} | {size} | {percentile(times, 50):.3f} | {percentile(times, 95):.3f} "
              f"| {percentile(times, 99):.3f} |")


if __name__ == "__main__":
    main()

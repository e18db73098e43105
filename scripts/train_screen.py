"""Train the logistic-regression screen on the team's own labelled texts and write its weights.

``.venv/bin/python scripts/train_screen.py [--l2 1.0] [--out benchmarks/data/classifier.json]``

Training data: ``benchmarks.training.team_set`` (the exemplar bank, the guard eval, the benign
traffic set), never a public corpus, never the team's held-out files. Features: the e5 query
vector of the text as the screen reads it (``guards.rules.unquoted``). The threshold is the
lowest at which at most 2% of the training set's benign texts that the pattern rules let
through and the semantic screen judges are refused. Deterministic: the same data gives the same
file (``benchmarks.classifier.fit``). The comparison with the exemplar margin, calibrated on one
family of sources and measured on the others, is ``benchmarks/guards_cross.py``; the numbers are
in docs/GUARDS.md. The runtime does not use these weights (the margin generalised better).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=BASE_DIR / "benchmarks" / "data" / "classifier.json")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    import django

    django.setup()
    from benchmarks import classifier
    from benchmarks.training import team_set, vectors
    from guards.rules import screen, unquoted
    from guards.semantic import judged
    from knowledge.embedders import E5Embedder

    rows = team_set()
    read = [unquoted(r.text) for r in rows]
    x = vectors(read, E5Embedder(), BASE_DIR / "var" / "cache" / "guard-vectors.npz")
    y = np.array([r.attack for r in rows], dtype=float)
    weights, bias = classifier.fit(x, y, l2=args.l2)
    probability = 1 / (1 + np.exp(-(x @ weights + bias)))
    open_to_it = np.array([r.attack or (screen(r.text) is None and judged(t)) for r, t in zip(rows, read, strict=True)])
    threshold = classifier.threshold_for(probability[open_to_it], y[open_to_it], false_positives=0.02)
    screen_ = classifier.LinearScreen(weights, bias, threshold, E5Embedder.name)
    classifier.save(screen_, args.out, l2=args.l2, trained_on=f"benchmarks.training.team_set: {len(rows)} texts "
                    f"({int(y.sum())} attacks)")
    print(f"{args.out}: {len(rows)} texts, {int(y.sum())} attacks, threshold {threshold:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

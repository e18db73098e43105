"""Cross-source measurement of the input screen (issue 44): calibrate on one family of sources,
report on the others, both ways round.

Families: ``team`` (the team's own writing: exemplars, the guard eval, benign traffic),
``owner-questions`` (the visitor questions of every owner's answer suites, benign),
``shared`` (``../shared/corpora``: llm-guard and deepset attacks, interview questions) and, with
``--heldout DIR``, a public held-out set (``attacks.jsonl``, ``benign.jsonl``, rows with a
``family``) that calibration never reads. The team's own held-out files are reported beside them.

Screens compared, each after the pattern rules (``guards.rules.screen``) and on the text as the
semantic screen reads it (``guards.rules.unquoted``):
- ``shipped``: the screen as configured (``TWIN_SEMANTIC_MARGIN`` and its length rules; the
  trained screen when its weights ship);
- ``margin``: the exemplar margin, one flat margin chosen on the calibration family (at most 2%
  of its benign texts refused), identifier messages left to the patterns;
- ``trained``: logistic regression over the same vectors, trained on the calibration family,
  its threshold chosen the same way;
- ``either``: refused when the margin or the trained screen refuses.

The exemplar bank itself is never measured (each exemplar would find itself). Usage:
``.venv/bin/python -m benchmarks.guards_cross [--corpora DIR] [--heldout DIR] [--json OUT]``.
Vectors are kept in ``var/cache/guard-vectors.npz``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent
FALSE_POSITIVES = 0.02
L2 = 1.0


def _sets(corpora: Path, heldout: list[Path] | None) -> dict[str, list]:
    from benchmarks.training import jsonl_set, owner_questions, team_holdout_set, team_set

    sets = {"team": team_set(), "team-holdout": team_holdout_set(), "owner-questions": owner_questions(),
            "shared": jsonl_set(corpora / "injections.dev.jsonl", attack=True)
            + jsonl_set(corpora / "benign.dev.jsonl", attack=False, family="interview-handbook")}
    for i, directory in enumerate(heldout or []):
        family = None if i == 0 else directory.name
        sets["heldout" if i == 0 else f"heldout:{directory.name}"] = (
            jsonl_set(directory / "attacks.jsonl", attack=True, family=family)
            + jsonl_set(directory / "benign.jsonl", attack=False, family=family))
    return sets


class Features:
    """Per text: the pattern verdict, the exemplar margin and the margin the shipped screen asks
    of it, whether it is an identifier message, and its vector."""

    def __init__(self, rows: list, cache: Path) -> None:
        from benchmarks.training import vectors
        from chat.agent.screening import exemplar_screen
        from guards.rules import screen, unquoted
        from guards.semantic import identifier_message
        from knowledge.embedders import get_embedder

        embedder = get_embedder()
        read = [unquoted(r.text) for r in rows]
        self.vectors = vectors(read, embedder, cache)
        bank = exemplar_screen(embedder)
        scores = [bank.score(v) for v in self.vectors]
        self.margin = np.array([s.margin for s in scores])
        self.required = np.array([bank.required_margin(t) for t in read])
        self.patterns = np.array([screen(r.text) is not None for r in rows])
        self.identifier = np.array([identifier_message(t) for t in read])
        self.attack = np.array([r.attack for r in rows])


def _lowest_margin(f: Features, index: np.ndarray) -> float:
    """The lowest flat margin at which at most FALSE_POSITIVES of the benign rows are refused."""
    benign = index & ~f.attack
    allowed = int(np.floor(FALSE_POSITIVES * benign.sum())) - int((f.patterns & benign).sum())
    candidates = np.sort(f.margin[benign & ~f.patterns & ~f.identifier])[::-1]
    if allowed < 0 or not len(candidates):
        return float(candidates[0] + 1e-6) if len(candidates) else 0.0
    return float(candidates[min(allowed, len(candidates) - 1)] + 1e-6) if allowed < len(candidates) else -1.0


def calibrate(f: Features, index: np.ndarray) -> dict:
    """A flat margin and a trained screen, both from the rows in ``index`` only."""
    from benchmarks.classifier import fit

    weights, bias = fit(f.vectors[index], f.attack[index].astype(float), l2=L2)
    probability = 1 / (1 + np.exp(-(f.vectors @ weights + bias)))
    benign = index & ~f.attack & ~f.patterns & ~f.identifier
    allowed = int(np.floor(FALSE_POSITIVES * (index & ~f.attack).sum())) - int((f.patterns & index & ~f.attack).sum())
    ranked = np.sort(probability[benign])[::-1]
    threshold = float(ranked[max(0, allowed)] + 1e-9) if 0 <= allowed < len(ranked) else 1.0
    return {"margin": _lowest_margin(f, index), "probability": probability, "threshold": threshold}


def decisions(f: Features, calibration: dict, shipped: np.ndarray) -> dict[str, np.ndarray]:
    judged = ~f.identifier
    by_margin = judged & (f.margin >= calibration["margin"])
    trained = judged & (calibration["probability"] >= calibration["threshold"])
    return {"shipped": f.patterns | shipped, "margin": f.patterns | by_margin,
            "trained": f.patterns | trained, "either": f.patterns | by_margin | trained}


def report(rows: list, f: Features, blocked: dict[str, np.ndarray], index: np.ndarray) -> list[dict]:
    """Per screen, per source family, language and kind: attacks caught, benign refused."""
    out = []
    for screen, refused in blocked.items():
        groups: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for i in np.flatnonzero(index):
            side = "attack" if rows[i].attack else "benign"
            for group in ("all", f"source:{rows[i].source}", f"lang:{rows[i].lang}", f"kind:{rows[i].kind or '-'}"):
                groups[group][side] += 1
                groups[group][f"{side}_refused"] += int(refused[i])
        for group, c in sorted(groups.items()):
            out.append({"screen": screen, "group": group, "attacks": c["attack"], "caught": c["attack_refused"],
                        "benign": c["benign"], "refused": c["benign_refused"]})
    return out


def margins(f: Features, index: np.ndarray) -> dict:
    """The exemplar margin's distribution, attacks and benign side by side (patterns' catches aside)."""
    out = {}
    for side, mask in (("attack", f.attack), ("benign", ~f.attack)):
        values = f.margin[index & mask & ~f.patterns]
        out[side] = ({f"p{q}": round(float(np.percentile(values, q)), 4) for q in (5, 25, 50, 75, 95)}
                     if len(values) else {})
    return out


def _print(rows: list[dict], title: str) -> None:
    print(f"\n## {title}\n\n| screen | group | attacks caught | benign refused |\n|---|---|---|---|")
    for r in rows:
        caught = f"{r['caught']}/{r['attacks']} ({100 * r['caught'] / r['attacks']:.1f}%)" if r["attacks"] else "-"
        refused = f"{r['refused']}/{r['benign']} ({100 * r['refused'] / r['benign']:.1f}%)" if r["benign"] else "-"
        print(f"| {r['screen']} | {r['group']} | {caught} | {refused} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=BASE_DIR.parent / "shared" / "corpora")
    parser.add_argument("--heldout", type=Path, nargs="*", help="held-out set folders; the first one's rows"
                        " keep their own families, each further folder is one family of its own")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twinsite.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from chat.agent.screening import shipped_blocks

    sets = _sets(args.corpora, args.heldout)
    rows = [row for name in sets for row in sets[name]]
    family = np.array([name for name in sets for _ in sets[name]])
    # the exemplar bank trains the trained screen but is never measured: each would find itself
    measured = np.array([row.source != "team:exemplars" for row in rows])
    f = Features(rows, BASE_DIR / "var" / "cache" / "guard-vectors.npz")
    from guards.rules import unquoted
    from knowledge.embedders import get_embedder

    shipped = np.array([shipped_blocks(get_embedder(), v, unquoted(r.text))
                        for v, r in zip(f.vectors, rows, strict=True)])
    results: dict = {}
    for calibrated_on in ("team", "shared"):
        calibration = calibrate(f, family == calibrated_on)
        blocked = decisions(f, calibration, shipped)
        for name in sets:
            table = report(rows, f, blocked, (family == name) & measured)
            results[f"{calibrated_on}->{name}"] = {"margin": calibration["margin"],
                                                   "threshold": calibration["threshold"], "rows": table}
            _print(table, f"calibrated on {calibrated_on}, measured on {name} (margin "
                          f"{calibration['margin']:.4f}, threshold {calibration['threshold']:.3f})")
    results["margins"] = {name: margins(f, (family == name) & measured) for name in sets}
    print("\n## exemplar margins (texts the patterns let through)\n")
    for name, m in results["margins"].items():
        print(f"- {name}: attacks {m['attack']}; benign {m['benign']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

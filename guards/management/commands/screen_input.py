"""Run the input screen over a JSON-lines file: one verdict a line (refuse, shield or pass, with the
guard, the rule or the semantic score, and the reason), then a summary."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.agent.screening import screen_question
from guards.rules import mask_sensitive
from guards.verdicts import PASS, REFUSE, SHIELD, ScreenResult
from knowledge.embedders import get_embedder


def _length(text: str) -> str:
    words = len(text.split())
    return "words<=5" if words <= 5 else "words6-20" if words <= 20 else "words21-100" if words <= 100 else "words>100"


def _groups(row: dict, text: str) -> list[str]:
    """The groups a line counts in: all, its language, its source and class when it has them, its length."""
    groups = ["all", f"lang:{row.get('lang') or '?'}", _length(text)]
    groups += [f"{key}:{row[key]}" for key in ("source", "class") if row.get(key)]
    return groups


class Command(BaseCommand):
    help = ("Screen each line of a JSON-lines file like a visitor's question. Prints one JSON verdict a line "
            "(refuse, shield, pass), then counts per verdict and rule; with labels, the share of attacks and of "
            "honest lines kept from the model, refused and shielded, overall and per language, source, class and "
            "length (words: <=5, 6-20, 21-100, >100).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--jsonl", required=True, help="the file ('-' for standard input)")
        parser.add_argument("--field", default="text", help="the field holding the text (default: text)")
        parser.add_argument("--label", help="a boolean field: the line is an attack (to keep from the model)")
        parser.add_argument("--expect", choices=["block", "pass"], help="the label of every line")
        parser.add_argument("--patterns-only", action="store_true", help="leave the semantic screen out")
        parser.add_argument("--quiet", action="store_true", help="the summary only")
        parser.add_argument("--curve", help="semantic margins to summarise the labelled rates at besides the "
                                            "configured one, comma-separated (e.g. -0.02,-0.01,0): the curve")

    def handle(self, *args, jsonl: str, field: str, label: str | None, expect: str | None, patterns_only: bool,
               quiet: bool, curve: str | None = None, **options) -> None:
        try:
            lines = (sys.stdin if jsonl == "-" else Path(jsonl).open(encoding="utf-8")).read().split("\n")
        except OSError as exc:
            raise CommandError(f"cannot read {jsonl}: {exc}") from exc
        embedder = None if patterns_only else get_embedder()
        try:
            margins = [float(m) for m in curve.split(",")] if curve else []
        except ValueError as exc:
            raise CommandError(f"--curve takes numbers separated by commas ({exc})") from exc
        rules: collections.Counter = collections.Counter()
        stats: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        curves: dict[float, dict[str, collections.Counter]] = {
            m: collections.defaultdict(collections.Counter) for m in margins}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row[field]
            except (ValueError, KeyError, TypeError) as exc:
                raise CommandError(f"line {number}: no JSON object with a {field!r} field ({exc})") from exc
            result, _ = screen_question(text, embedder=embedder)
            out: dict = {"line": number, "verdict": result.verdict, "blocked": result.kept_from_model}
            if result.score is not None:
                out["semantic_margin"] = result.score
            if result.verdict != PASS:
                out |= {"guard": result.guard, "rule": result.rule, "view": result.view,
                        "matched": mask_sensitive(result.matched), "reason": result.reason}
                rules[f"{result.verdict}:{result.guard}/{result.rule}"] += 1
            should = (expect == "block") if expect else (bool(row.get(label)) if label else None)
            if should is not None:
                out["expected"] = "block" if should else "pass"
                _count(stats, curves, _groups(row, text), result, attack=should)
            if not quiet:
                self.stdout.write(json.dumps(out, ensure_ascii=False))
        verdicts = collections.Counter(key.split(":")[0] for key in rules.elements())
        summary: dict = {"summary": True, "lines": len([x for x in lines if x.strip()]),
                         "refused": verdicts[REFUSE], "shielded": verdicts[SHIELD], "blocked": sum(rules.values()),
                         "per_rule": dict(rules.most_common())}
        for group, counts in sorted(stats.items(), key=lambda kv: kv[0] != "all"):
            summary.setdefault("rates", {})[group] = _rates(counts)
        for margin, groups in curves.items():
            summary.setdefault("curve", {})[f"{margin:+.4f}"] = {
                group: _rates(counts) for group, counts in sorted(groups.items(), key=lambda kv: kv[0] != "all")}
        self.stdout.write(json.dumps(summary, ensure_ascii=False))


def _count(stats: dict, curves: dict, groups: list[str], result: ScreenResult, *, attack: bool) -> None:
    """One labelled line in each of its groups: at the configured margin and at every margin of the curve."""
    kind = "attacks" if attack else "honest"
    for group in groups:
        stats[group]["positives" if attack else "negatives"] += 1
        stats[group][f"{kind}:{result.verdict}"] += 1
        for margin, counts in curves.items():
            counts[group]["positives" if attack else "negatives"] += 1
            counts[group][f"{kind}:{_at(result, margin)}"] += 1


def _at(result: ScreenResult, margin: float) -> str:
    """The verdict the screen would give at another semantic margin: a pattern's verdict stands."""
    if result.verdict == REFUSE or (result.verdict == SHIELD and result.rule != "semantic"):
        return result.verdict
    return SHIELD if result.score is not None and result.score >= margin else PASS


def _rates(counts: collections.Counter) -> dict:
    """Kept from the model (refused or shielded), refused and shielded, of the lines labelled
    attacks and of the honest ones."""
    entry = {}
    for label, total in (("attacks", counts["positives"]), ("honest", counts["negatives"])):
        if not total:
            continue
        kept = counts[f"{label}:{REFUSE}"] + counts[f"{label}:{SHIELD}"]
        entry[label] = {name: f"{n}/{total} ({n / total:.1%})" for name, n in (
            ("kept_from_model", kept), ("refused", counts[f"{label}:{REFUSE}"]),
            ("shielded", counts[f"{label}:{SHIELD}"]))}
    return entry

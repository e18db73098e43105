"""Run the input guards over a JSON-lines file: one verdict a line, then a summary."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.agent.screening import semantic_verdict
from guards.rules import mask_sensitive, screen
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
    help = ("Screen each line of a JSON-lines file like a visitor's question. Prints one JSON verdict a line, "
            "then counts per rule; with labels, detection and false-positive rates overall and per language, "
            "source, class and length (words: <=5, 6-20, 21-100, >100).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--jsonl", required=True, help="the file ('-' for standard input)")
        parser.add_argument("--field", default="text", help="the field holding the text (default: text)")
        parser.add_argument("--label", help="a boolean field saying whether the line should be blocked")
        parser.add_argument("--expect", choices=["block", "pass"], help="the label of every line")
        parser.add_argument("--patterns-only", action="store_true", help="leave the semantic screen out")
        parser.add_argument("--quiet", action="store_true", help="the summary only")

    def handle(self, *args, jsonl: str, field: str, label: str | None, expect: str | None, patterns_only: bool,
               quiet: bool, **options) -> None:
        try:
            lines = (sys.stdin if jsonl == "-" else Path(jsonl).open(encoding="utf-8")).read().splitlines()
        except OSError as exc:
            raise CommandError(f"cannot read {jsonl}: {exc}") from exc
        embedder = None if patterns_only else get_embedder()
        rules: collections.Counter = collections.Counter()
        stats: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row[field]
            except (ValueError, KeyError, TypeError) as exc:
                raise CommandError(f"line {number}: no JSON object with a {field!r} field ({exc})") from exc
            verdict = screen(text)
            out: dict = {"line": number, "blocked": verdict is not None}
            if verdict is None and embedder is not None:
                verdict, score = semantic_verdict(embedder, embedder.query(text), text)
                out |= {"blocked": verdict is not None, "semantic_margin": round(score.margin, 4) if score else None}
            if verdict is not None:
                out |= {"guard": verdict.guard, "rule": verdict.rule, "view": verdict.view,
                        "matched": mask_sensitive(verdict.matched)}
                rules[f"{verdict.guard}/{verdict.rule}"] += 1
            should = (expect == "block") if expect else (bool(row.get(label)) if label else None)
            if should is not None:
                out["expected"] = "block" if should else "pass"
                for group in _groups(row, text):
                    stats[group]["positives" if should else "negatives"] += 1
                    if out["blocked"]:
                        stats[group]["detected" if should else "false_positives"] += 1
            if not quiet:
                self.stdout.write(json.dumps(out, ensure_ascii=False))
        summary: dict = {"summary": True, "lines": len([x for x in lines if x.strip()]),
                         "blocked": sum(rules.values()), "per_rule": dict(rules.most_common())}
        for group, counts in sorted(stats.items(), key=lambda kv: kv[0] != "all"):
            entry = {}
            if counts["positives"]:
                entry["detection"] = f"{counts['detected']}/{counts['positives']} "\
                                     f"({counts['detected'] / counts['positives']:.1%})"
            if counts["negatives"]:
                entry["false_positives"] = f"{counts['false_positives']}/{counts['negatives']} "\
                                           f"({counts['false_positives'] / counts['negatives']:.1%})"
            summary.setdefault("rates", {})[group] = entry
        self.stdout.write(json.dumps(summary, ensure_ascii=False))

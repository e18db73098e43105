"""``manage.py eval_claims [--dataset FILE | --answers FILE] [--floor X] [--verbose]``: the claim
checker's precision and recall per kind and language on a labelled set of claims, or of whole
cited answers (evals.claims); the design's figures for certain findings and doubts, and each kind
of finding's precision."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals.claims import DEV, answers_run, claims_run
from knowledge import claims


class Command(BaseCommand):
    help = "Measure the claim checker on labelled claims: precision and recall per kind and language."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", type=Path, default=DEV, help="a claims JSON-lines file")
        parser.add_argument("--answers", type=Path, help="whole answers, each sentence labelled (JSON lines)")
        parser.add_argument("--floor", type=float, help=f"the meaning floor (default {claims.MEANING_FLOOR})")
        parser.add_argument("--verbose", action="store_true", help="every claim the checker judged wrongly")

    def handle(self, *args, dataset: Path, answers: Path | None, floor: float | None, verbose: bool,
               **options) -> None:
        path = answers or dataset
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if floor is not None:
            claims.MEANING_FLOOR = floor
        try:
            report, stray = answers_run(answers) if answers else (claims_run(dataset), 0)
        except (ValueError, KeyError) as exc:
            raise CommandError(str(exc)) from exc
        if answers:
            self.stdout.write(f"reported sentences matching no labelled one: {stray}")
        for group, tallies in sorted(report.groups().items()):
            parts = [f"{label} flagged {t.flagged}/{t.total}" for label, t in sorted(tallies.items())]
            self.stdout.write(f"{group:28s} " + "; ".join(parts))
        precision, recall = report.precision_recall()
        self.stdout.write(f"precision {precision:.3f}, recall {recall:.3f} (unsupported is the positive class; "
                          f"meaning floor {claims.MEANING_FLOOR})")
        for name, (count, total) in report.bars().items():
            self.stdout.write(f"{name:32s} {count}/{total} ({count / total if total else 0:.1%})")
        for kind, (right, total) in report.findings().items():
            side = "certain" if kind in claims.CERTAIN else "doubt"
            self.stdout.write(f"finding {kind:24s} {side:7s} precision {right}/{total}")
        if verbose:
            for row in report.rows:
                if row["flagged"] != (not row["supported"]):
                    self.stdout.write(f"  {row.get('id')} {row['kind']}: {row['claim']!r} -> "
                                      f"{row['finding'] or 'passed'}{'' if row['certain'] else '?'} {row['detail']}")

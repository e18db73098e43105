from __future__ import annotations

import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from evals.owners import OwnerError, owner_active, owner_get, owner_run
from evals.retrieval import eval_run_record, evaluate, load_questions, relevance_gate
from knowledge.embedders import get_embedders
from knowledge.search import warm_vocabulary


class Command(BaseCommand):
    help = "Measure retrieval (recall@1, recall@3, MRR per language and mode); exit 1 below the thresholds."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--misses", action="store_true", help="list the hybrid misses (rank > 3)")
        parser.add_argument("--owner", help="measure this owner's questions on its own knowledge (evals/owners/<key>/, "
                                            "or 'sample'), in a scratch database of its own")

    def handle(self, *args, **options) -> None:
        questions_path = None
        if options.get("owner"):
            try:
                owner = owner_get(options["owner"])
                if not owner_active(owner):
                    command = ["eval_retrieval", "--owner", owner.key] + (["--misses"] if options["misses"] else [])
                    if status := owner_run(owner, command):
                        sys.exit(status)
                    return
            except OwnerError as exc:
                raise CommandError(str(exc)) from exc
            questions_path = owner.retrieval
        started = timezone.now()
        embedders = get_embedders()
        warm_vocabulary()  # as a serving process does: every question searched with translations
        questions = load_questions(questions_path) if questions_path else load_questions()
        metrics, detail = evaluate(embedders, questions)
        self.stdout.write(f"retrieval eval: {len(questions)} questions; embedders: "
                          f"{', '.join(e.name for e in embedders)}")
        self.stdout.write(f"{'mode':<14} {'lang':<4} {'n':>3} {'R@1':>6} {'R@3':>6} {'MRR':>6}")
        for mode, by_lang in metrics.items():
            for lang, row in by_lang.items():
                self.stdout.write(
                    f"{mode:<14} {lang:<4} {row['n']:>3} {row['recall@1']:>6.3f} {row['recall@3']:>6.3f} "
                    f"{row['mrr']:>6.3f}"
                )
        gate = relevance_gate(embedders, questions)
        metrics["relevance_gate"] = gate
        leaked = {key: ", ".join(gate[f"{key}_passed"]) or "none" for key in ("off_topic", "off_topic_holdout")}
        self.stdout.write(
            f"relevance gate: {gate['answerable']:.3f} of answerable questions may be answered; "
            f"{gate['off_topic']:.3f} of off-topic questions would be ({leaked['off_topic']}); "
            f"held out: {gate['off_topic_holdout']:.3f} ({leaked['off_topic_holdout']})"
        )
        thresholds = {"recall@3": settings.TWIN_EVAL_RECALL3_MIN, "recall@3_nl": settings.TWIN_EVAL_RECALL3_NL_MIN}
        hybrid = metrics["hybrid"]
        passed = (hybrid["all"]["recall@3"] >= thresholds["recall@3"]
                  and hybrid.get("nl", {"recall@3": 1.0})["recall@3"] >= thresholds["recall@3_nl"])
        run = eval_run_record(embedders=embedders, metrics=metrics, detail=detail, passed=passed,
                              thresholds=thresholds, started_at=started)
        if options["misses"]:
            for question, rank, top3 in detail["hybrid"]:
                if rank is None or rank > 3:
                    self.stdout.write(f"  miss {question.id} (rank {rank}): {question.q} -> {top3}")
        verdict = "PASS" if passed else "FAIL"
        self.stdout.write(
            f"{verdict}: hybrid recall@3 {hybrid['all']['recall@3']:.3f} (min {thresholds['recall@3']}), "
            f"Dutch {hybrid.get('nl', {}).get('recall@3', 0):.3f} (min {thresholds['recall@3_nl']}); run {run.pk}"
        )
        if not passed:
            sys.exit(1)

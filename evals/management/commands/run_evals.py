"""Run the labelled suites against the real graph; exit non-zero below any threshold."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evals import datasets
from evals.owners import SAMPLE, OwnerError, owner_active, owner_get, owner_run
from evals.suites import EvalsError, run_report, suites_run
from guards.verdicts import SHIELD


class Command(BaseCommand):
    help = ("Run the eval suites (tool selection, task completion, answer quality, guards) through the real "
            "graph, one new conversation per case; print each case and the score against each threshold, store "
            "the run, show what changed since the previous run; exit 1 below any threshold.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--suite", choices=[*datasets.SUITES, "all"], default="all")
        parser.add_argument("--provider", help="offline, or the configured TWIN_PROVIDER (the default)")
        parser.add_argument("--fault-drop-every", type=int, default=0, metavar="N",
                            help="drop every Nth provider HTTP request (retries must absorb it)")
        parser.add_argument("--dataset", type=Path, help="run this file instead of evals/data/<suite>.yaml "
                                                         "(one suite only)")
        parser.add_argument("--owner", help="run for this owner (evals/owners/<key>/, or 'sample') in a scratch "
                                            "database of its own; another owner than the sample runs its answers")
        parser.add_argument("--force-shield", action="store_true",
                            help="answer every turn the screen would pass without the model, as a shielded turn "
                                 "is (TWIN_SCREEN_FORCE=shield): what a doubtful visitor gets")

    def handle(self, *args, suite: str, provider: str | None, fault_drop_every: int, dataset: Path | None,
               owner: str | None = None, force_shield: bool = False, **options) -> None:
        if force_shield:  # this process, and an owner's process started below
            os.environ["TWIN_SCREEN_FORCE"] = settings.TWIN_SCREEN_FORCE = SHIELD
        if owner is not None:
            here = self._for_owner(owner, suite, dataset, provider, options["verbosity"])
            if here is None:
                return  # it ran in the owner's own process
            suite, dataset = here
        self._progress_line = ""
        try:
            runs = suites_run(suite=suite, provider=provider, fault_drop_every=fault_drop_every, dataset=dataset,
                              progress=self._progress, quiet=options["verbosity"] < 2)
        except EvalsError as exc:
            raise CommandError(str(exc)) from exc
        for result, run in runs:
            for line in run_report(result, run):
                self.stdout.write(line)
        self.stdout.write("")
        self.stdout.write("  ".join(f"{r.suite} {r.score:.3f}/{r.dataset.threshold:.2f} "
                                    f"{'PASS' if r.passed else 'FAIL'}" for r, _ in runs))
        failed = [r.suite for r, _ in runs if not r.passed]
        if failed:
            raise CommandError(f"below threshold: {', '.join(failed)}", returncode=1)

    def _for_owner(self, key: str, suite: str, dataset: Path | None, provider: str | None,
                   verbosity: int) -> tuple[str, Path | None] | None:
        """The suite and dataset to run here when this process serves the owner; otherwise the
        same command runs in the owner's scratch database and this one ends with its status."""
        try:
            owner = owner_get(key)
        except OwnerError as exc:
            raise CommandError(str(exc)) from exc
        if key != SAMPLE:
            # The other suites are written for the sample's knowledge: another owner has answers.
            if suite not in ("all", "answers"):
                raise CommandError(f"owner {key} has the answers suite only")
            suite, dataset = "answers", dataset or owner.answers
        if owner_active(owner):
            return suite, dataset
        command = ["run_evals", "--owner", key, "--suite", suite, "-v", str(verbosity)]
        command += ["--provider", provider] if provider else []
        command += ["--dataset", str(dataset)] if dataset else []
        try:
            status = owner_run(owner, command)
        except OwnerError as exc:
            raise CommandError(str(exc)) from exc
        if status:
            raise CommandError(f"owner {key}: run_evals exited {status}", returncode=status)
        return None

    def _progress(self, suite: str, done: int, total: int, case_id: str) -> None:
        if not self.stderr.isatty():
            return
        width = 30
        filled = width * done // max(total, 1)
        line = f"\r{suite:<8} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {case_id}"
        plain = str  # a progress bar, not an error: no colour
        self.stderr.write(line.ljust(len(self._progress_line)), ending="", style_func=plain)
        self._progress_line = line
        if done == total:
            self.stderr.write("", style_func=plain)
            self._progress_line = ""

from __future__ import annotations

import logging
import sys
from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from knowledge.content import KINDS, LANGS
from knowledge.importing.files import Status, owner_name, plan, write, write_owner
from knowledge.importing.followed import IMPORTS_FILE, remember
from knowledge.importing.model import LEFT_OUT
from knowledge.importing.sources import read_sources
from knowledge.models import TaughtAnswer
from knowledge.services import progress_bar


class Command(BaseCommand):
    help = ("Import an owner's own material as knowledge files: a CV or LinkedIn PDF, a DOCX CV, a web page or "
            "site (its root or sitemap.xml address), or a folder of Hugo, Jekyll, Eleventy or Astro Markdown.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("sources", nargs="*", metavar="SOURCE")
        parser.add_argument("--into", type=Path, default=None,
                            help="the knowledge folder to write to (default: TWIN_KNOWLEDGE_DIR)")
        parser.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
        parser.add_argument("--force", action="store_true",
                            help="overwrite files the owner edited since their import")
        parser.add_argument("--kind", choices=KINDS, help="every document of this kind (default: guessed)")
        parser.add_argument("--lang", choices=LANGS, help="every document in this language (default: the "
                                                          "page's <html lang>, else detected)")
        parser.add_argument("--max-pages", type=int, default=50, help="pages read of a whole site (default 50)")
        parser.add_argument("--sync", action="store_true", help="run sync_knowledge on the folder afterwards")
        parser.add_argument("--refresh", action="store_true",
                            help="read every source imported before (imports.yaml) again and sync what changed: "
                                 "what the worker does every TWIN_IMPORT_EVERY")

    def handle(self, *args, **options) -> None:
        root = (options["into"] or settings.TWIN_KNOWLEDGE_DIR).resolve()
        if options["refresh"]:
            if options["sources"] or options["dry_run"]:
                raise CommandError("--refresh reads the sources imported before: name no source, no --dry-run")
            self._refresh(root)
            return
        if not options["sources"]:
            raise CommandError("name at least one source (a PDF, a DOCX, a web address or a folder), or --refresh")
        if options["max_pages"] < 1:
            raise CommandError("--max-pages must be at least 1")
        # every request and every page trafilatura discards would be a log line: the summary says it
        logging.getLogger("httpx").setLevel(logging.WARNING)
        logging.getLogger("trafilatura").setLevel(logging.ERROR)
        bar = sys.stderr.isatty() and options["verbosity"] > 0
        bar_fn = partial(progress_bar, label="reading", minimum=0, finish=False) if bar else None
        reading = read_sources(options["sources"], kind=options["kind"], lang=options["lang"],
                               max_pages=options["max_pages"], progress=bar_fn)
        if bar:
            sys.stderr.write("\n")
        entries = plan(reading.docs, root, force=options["force"], taken_titles=_taught_titles())
        written = 0 if options["dry_run"] else write(entries, root)
        if not options["dry_run"]:  # followed from now on (TWIN_IMPORT_EVERY)
            failed = {source for source, _ in reading.failed}
            remember(root, [s for s in options["sources"] if s not in failed], kind=options["kind"],
                     lang=options["lang"], max_pages=options["max_pages"])
        self._summary(entries, reading, root, dry_run=options["dry_run"], written=written)
        name = owner_name(reading.docs, root)
        if name:
            if not options["dry_run"]:
                write_owner(name, root)
            self.stdout.write(f"owner.yaml: {'would name' if options['dry_run'] else 'names'} the owner {name!r} "
                              "(the CV's name; edit it there; a running site reads it when it starts)")
        if options["sync"] and not options["dry_run"] and entries:
            call_command("sync_knowledge", dir=root, verbosity=options["verbosity"], stdout=self.stdout)
        if reading.failed:
            raise CommandError(f"{len(reading.failed)} of {len(options['sources'])} sources could not be imported "
                               "(see above)")

    def _refresh(self, root: Path) -> None:
        from knowledge.services import knowledge_refresh

        logging.getLogger("trafilatura").setLevel(logging.ERROR)
        report = knowledge_refresh(root=root, force=True)
        if report is None:
            raise CommandError(f"nothing to refresh: {root / IMPORTS_FILE} names no source (import one first)")
        for line in _refresh_lines(report):
            self.stdout.write(line)
        if report.failed:
            raise CommandError(f"{len(report.failed)} of {len(report.sources)} sources could not be read")

    def _summary(self, entries, reading, root: Path, *, dry_run: bool, written: int) -> None:
        rows = [("file", "status", "title", "kind", "lang", "words", "source")]
        for e in entries:
            if e.status == Status.SKIPPED:
                continue
            kind = e.doc.kind if e.doc.kind_sure else f"{e.doc.kind}?"
            rows.append((e.path, str(e.status), _cut(e.doc.title, 40), kind, e.doc.lang, str(e.doc.words),
                         _cut(e.doc.source, 50)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        for skip in reading.skipped:
            self.stdout.write(f"skipped  {skip.source}: {skip.reason}")
        for e in entries:
            if e.status == Status.SKIPPED:
                self.stdout.write(f"skipped  {e.doc.source}: {e.reason}")
        for doc in reading.docs:
            for why, text in doc.left_out:
                self.stdout.write(f'{LEFT_OUT[why]}  {doc.source}: "{text}"')
        for source, reason in reading.failed:
            self.stderr.write(f"failed   {source}: {reason}")
        unsure = [e.path for e in entries if not e.doc.kind_sure]
        if unsure:
            self.stdout.write(f"kind unsure (marked ?): check 'kind:' in {', '.join(unsure)}")
        counts = {s: sum(e.status == s for e in entries) for s in Status}
        verb = "would write" if dry_run else "wrote"
        self.stdout.write(
            f"import_knowledge ({root}): {verb} {counts[Status.NEW] + counts[Status.CHANGED] if dry_run else written} "
            f"files ({counts[Status.NEW]} new, {counts[Status.CHANGED]} changed), {counts[Status.UNCHANGED]} "
            f"unchanged, {counts[Status.KEPT]} kept (edited by you; --force overwrites), "
            f"{len(reading.skipped) + counts[Status.SKIPPED]} "
            f"skipped, {len(reading.failed)} failed, {sum(len(d.left_out) for d in reading.docs)} passages left out")


def _refresh_lines(report) -> list[str]:
    lines = []
    for source in report.sources:
        if source.error:
            lines.append(f"failed   {source.source}: {source.error} (nothing changed)")
            continue
        c = source.changes
        lines.append(f"refreshed {source.source}: {c['updated']} updated, {c['new']} new, {c['gone']} gone, "
                     f"{c['kept']} kept (edited by you), {c['unchanged']} unchanged")
        lines += [f"gone     {path}: unpublished (public: false), the page is no longer on the site"
                  for path in source.gone]
    return lines


def _taught_titles() -> set[str]:
    """The questions of answers taught in the admin: document titles too, which an import must not repeat."""
    try:
        return set(TaughtAnswer.objects.values_list("question", flat=True))
    except DatabaseError:  # no database (an import before the first migrate): the sync checks them
        return set()


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"

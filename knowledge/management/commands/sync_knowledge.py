from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from knowledge.content import ContentError
from knowledge.embedders import get_embedders
from knowledge.services import knowledge_sync, progress_bar


class Command(BaseCommand):
    help = "Sync the Markdown knowledge folder into the database, embedding only new chunks."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dir", type=Path, default=None,
                            help="content folder (default: TWIN_KNOWLEDGE_DIR)")

    def handle(self, *args, **options) -> None:
        root = (options["dir"] or settings.TWIN_KNOWLEDGE_DIR).resolve()
        started = time.perf_counter()
        embedders = get_embedders()
        show_progress = options["verbosity"] > 0
        try:
            report = knowledge_sync(
                root=root, embedders=embedders, progress=progress_bar if show_progress else None
            )
        except ContentError as exc:
            raise CommandError(f"knowledge sync refused, nothing changed: {exc}") from exc
        elapsed = time.perf_counter() - started
        self.stdout.write(
            f"sync_knowledge ({root}): {report} in {elapsed:.1f}s"
        )

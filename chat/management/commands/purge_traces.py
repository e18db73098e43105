from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone

from chat.services import traces_purge


class Command(BaseCommand):
    help = "Delete agent traces older than TWIN_TRACE_RETENTION_DAYS (turn logs and messages stay)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=int, default=None, help="override the retention in days")
        parser.add_argument("--dry-run", action="store_true")

    def handle(self, *args, **options) -> None:
        days = options["days"] if options["days"] is not None else settings.TWIN_TRACE_RETENTION_DAYS
        cutoff = timezone.now() - dt.timedelta(days=days)
        deleted = traces_purge(before=cutoff, dry_run=options["dry_run"])
        verb = "would delete" if options["dry_run"] else "deleted"
        self.stdout.write(f"purge_traces: {verb} {deleted} traces older than {days} days ({cutoff:%Y-%m-%d %H:%M})")

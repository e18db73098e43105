from __future__ import annotations

import datetime as dt
import re

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from chat.lifecycle import PURGE_BATCH, checkpoint_stats, conversations_purge, human_bytes

UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def age(text: str) -> dt.timedelta:
    match = re.fullmatch(r"(\d+)([mhdw])", text.strip().lower())
    if not match or int(match[1]) == 0:
        raise CommandError(f"--older-than must look like 180d, 12w, 36h or 90m; got {text!r}")
    return dt.timedelta(seconds=int(match[1]) * UNITS[match[2]])


class Command(BaseCommand):
    help = ("Delete conversations idle for longer than --older-than (default TWIN_CONVERSATION_RETENTION_DAYS) "
            "with their messages, turn logs, traces, LangGraph checkpoints, sessions, guard incidents and contact "
            "requests; unlink their ledger entries. Also expired sessions and older guard incidents. Conversations "
            "with a turn running or a contact request in motion are left for a later run.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--older-than", default=None, help="idle time, e.g. 180d, 12w, 36h")
        parser.add_argument("--dry-run", action="store_true", help="count what would go; delete nothing")
        parser.add_argument("--stats", action="store_true", help="only show what the checkpoints take")
        parser.add_argument("--batch", type=int, default=PURGE_BATCH, help="conversations per transaction")

    def handle(self, *args, older_than: str | None, dry_run: bool, stats: bool, batch: int, **options) -> None:
        before_stats = checkpoint_stats()
        self.stdout.write(f"checkpoints: {before_stats}")
        if stats:
            return
        if batch < 1:
            raise CommandError("--batch must be at least 1")
        idle = age(older_than) if older_than else dt.timedelta(days=settings.TWIN_CONVERSATION_RETENTION_DAYS)
        cutoff = timezone.now() - idle
        report = conversations_purge(before=cutoff, dry_run=dry_run, batch=batch)
        verb = "would delete" if dry_run else "deleted"
        self.stdout.write(
            f"purge_conversations: {verb} {report} (idle since before {timezone.localtime(cutoff):%Y-%m-%d %H:%M}); "
            f"skipped {report.skipped_busy} with a turn running, {report.skipped_unsettled} with a contact request "
            f"in motion; expired sessions: {report.expired_sessions}; older guard incidents: {report.old_incidents}")
        if not dry_run:
            after = checkpoint_stats()
            self.stdout.write(f"checkpoints after: {after.rows} rows, {human_bytes(after.bytes)}: reclaimed "
                              f"{before_stats.rows - after.rows} rows, {human_bytes(before_stats.bytes - after.bytes)} "
                              "(Postgres reuses the space after autovacuum; the files shrink only with VACUUM FULL)")

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from ops.backup import BackupError, default_path, dump


class Command(BaseCommand):
    help = "Dump the database with pg_dump (custom format) to var/backups/ or --output."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--output", type=Path, default=None,
                            help="the dump file (default: $TWIN_VAR_DIR/backups/twinsite-<time>.dump)")

    def handle(self, *args, output: Path | None, **options) -> None:
        path = output or default_path(settings.VAR_DIR / "backups")
        try:
            written = dump(settings_dict=connection.settings_dict, path=path)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"backup: {connection.settings_dict['NAME']} -> {written} "
                          f"({written.stat().st_size / 1024:.0f} KB)")

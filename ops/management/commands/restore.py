from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from ops.backup import BackupError, restore


class Command(BaseCommand):
    help = ("Replace the database's contents by a dump of `manage.py backup` (one transaction: a failure "
            "changes nothing). Stop daphne and the worker first; run migrate afterwards if the code is newer.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path, help="the .dump file")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    def handle(self, *args, path: Path, yes: bool, **options) -> None:
        name = connection.settings_dict["NAME"]
        if not yes and input(f"Replace everything in database {name!r} by {path}? [y/N] ").strip().lower() != "y":
            raise CommandError("restore cancelled, nothing changed")
        connection.close()  # our own connection must not hold the tables the restore drops
        try:
            restore(settings_dict=connection.settings_dict, path=path)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"restore: {path} -> {name}")

"""The owner's digest from the terminal: print it, and send it now unless --dry-run."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from digest.services import digest_build, digest_send


class Command(BaseCommand):
    help = ("Send the owner's digest now (the worker sends it daily at TWIN_DIGEST_TIME) and print it; "
            "nothing is sent when there is nothing to say.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true",
                            help="print the digest without sending it or making its links")
        parser.add_argument("--html", metavar="PATH", help="also write the HTML part to this file")

    def handle(self, *args, dry_run: bool = False, html: str | None = None, **options) -> None:
        if dry_run:
            outcome, digest = ("dry run" if (d := digest_build(with_links=False)).has_news else "nothing"), d
        else:
            outcome, digest = digest_send(force=True)
        if outcome == "failed":
            raise CommandError("the digest could not be sent: see the log and the admin's digest days "
                               "(the worker retries)")
        if digest is None or outcome == "nothing":
            self.stdout.write("Nothing to say: no digest " + ("would be sent." if dry_run else "sent."))
            return
        self.stdout.write(f"Subject: {digest.subject}\n\n{digest.text}")
        if html:
            Path(html).write_text(digest.html, encoding="utf-8")
            self.stdout.write(f"HTML part written to {html}")
        self.stdout.write(f"({outcome}{'' if dry_run else ' to the owner'})")

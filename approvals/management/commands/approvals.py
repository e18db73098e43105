"""The approval queue from the terminal: the same services as the admin and the API."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from approvals import selectors
from approvals.errors import ApprovalError
from chat.selectors import approval_transcript
from chat.turns.decisions import approval_decide


class Command(BaseCommand):
    help = "List, show and decide contact requests waiting for the owner."

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="requests, newest first")
        listing.add_argument("--status", choices=["pending", "approved", "rejected", "expired", "all"],
                             default="pending")
        for name in ("show", "approve", "reject", "edit"):
            action = sub.add_parser(name)
            action.add_argument("id", type=int)
            if name == "reject":
                action.add_argument("--reason", required=True)
            if name == "edit":
                action.add_argument("--field", action="append", required=True, metavar="NAME=VALUE",
                                    help="an argument to change before approving (repeatable)")
            if name in ("approve", "reject", "edit"):
                action.add_argument("--as", dest="actor", default="terminal", help="recorded as the decider")

    def handle(self, *args, action: str, **options) -> None:
        if action == "list":
            rows = selectors.approval_list(status=None if options["status"] == "all" else options["status"])
            for row in rows:
                created = timezone.localtime(row["created_at"])
                self.stdout.write(f"{row['id']:>5}  {row['status']:<9} {created:%Y-%m-%d %H:%M}  "
                                  f"{row['visitor_name'] or '-'} <{row['visitor_email'] or '-'}>  {row['subject']}")
            if not rows:
                self.stdout.write("no requests")
            return
        try:
            if action == "show":
                detail = selectors.approval_detail(approval_id=options["id"])
                detail["transcript"] = approval_transcript(selectors.approval_get(approval_id=options["id"]))
                self.stdout.write(json.dumps(detail, indent=2, default=str, ensure_ascii=False))
                return
            edits = None
            if action == "edit":
                edits = {}
                for item in options["field"]:
                    name, sep, value = item.partition("=")
                    if not sep:
                        raise CommandError(f"--field must be NAME=VALUE, got {item!r}")
                    edits[name.strip()] = value
            approval = approval_decide(
                approval_id=options["id"], decision=action, actor=options["actor"],
                reason=options.get("reason") or "", edits=edits)
        except ApprovalError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        self.stdout.write(f"approval {approval.pk}: {approval.status}; the thread resumes in the worker")

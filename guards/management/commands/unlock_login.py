"""``manage.py unlock_login NAME``: clear the failed-login counts of an admin name (guards/login.py),
from every address and browser, so that it can sign in again at once."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from guards import login


class Command(BaseCommand):
    help = "Clear the failed-login counts of an admin name (every address and browser)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username", help="the name as typed at the login (case and width do not matter)")

    def handle(self, *args, username: str, **options) -> None:
        removed = login.forget(username)
        self.stdout.write(f"unlock_login {username}: {removed} count(s) cleared")

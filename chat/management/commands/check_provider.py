"""What the configured model server can do: ``manage.py check_provider [--json]``."""

from __future__ import annotations

import asyncio
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.providers import get_provider
from chat.providers.capability import capabilities


class Command(BaseCommand):
    help = ("Send two short streamed requests to the configured provider and report whether it streams text, "
            "streams tool calls and reports usage, with the fix for each failure. Exits 1 when it cannot stream "
            "text or tool calls (no usage is only reported: calls are then charged at an estimate).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print the result as one JSON object")

    def handle(self, *args, **options) -> None:
        if settings.TWIN_PROVIDER == "offline":
            self.stdout.write("offline provider: no model server to check")
            return
        provider = get_provider()
        found = asyncio.run(capabilities(provider))
        if options["json"]:
            self.stdout.write(json.dumps({"provider": provider.name, "model": provider.model, **found.as_dict()}))
        else:
            self.stdout.write(f"{provider.name}/{provider.model}")
            for name in ("streams_text", "streams_tool_calls", "reports_usage", "no_markup"):
                self.stdout.write(f"  {name.replace('_', ' ')}: {'yes' if getattr(found, name) else 'NO'}")
            for error in found.errors:
                self.stdout.write(f"  error: {error}")
            for name, fix in found.problems().items():
                self.stdout.write(f"  fix ({name.replace('_', ' ')}): {fix}")
        if found.errors or not (found.streams_text and found.streams_tool_calls):
            raise CommandError("the provider lacks what the twin needs (see above)", returncode=1)

"""What the configured model server can do: ``manage.py check_provider [--json]``."""

from __future__ import annotations

import asyncio
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.agent.prompts import system_prompt
from chat.providers import get_provider
from chat.providers.capability import capabilities
from knowledge.prefix import knowledge_prefix
from ops.services import provider_check_record


class Command(BaseCommand):
    help = ("Send three short streamed requests to the configured provider and report whether it streams text, "
            "streams tool calls, reports usage and takes the twin's own prompt, with the fix for each failure; the "
            "result is kept for /api/health (staff). Exits 1 when it cannot stream text or tool calls or take the "
            "prompt (no usage is only reported: calls are then charged at an estimate). `make run` runs it.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print the result as one JSON object")

    def handle(self, *args, **options) -> None:
        if settings.TWIN_PROVIDER == "offline":
            self.stdout.write("offline provider: no model server to check")
            return
        # once, briefly: `make run` waits for it
        provider = get_provider(max_attempts=1, timeout=min(settings.TWIN_PROVIDER_TIMEOUT, 30.0))
        prompt = system_prompt(settings.TWIN_OWNER_NAME, knowledge_prefix()[0])
        found = asyncio.run(capabilities(provider, prompt))
        provider_check_record(provider=provider.name, model=provider.model, result=found.as_dict(), ok=found.usable)
        if options["json"]:
            self.stdout.write(json.dumps({"provider": provider.name, "model": provider.model, **found.as_dict()}))
        else:
            self.stdout.write(f"{provider.name}/{provider.model}")
            for name in ("streams_text", "streams_tool_calls", "reports_usage", "no_markup", "fits_prompt"):
                self.stdout.write(f"  {name.replace('_', ' ')}: {'yes' if getattr(found, name) else 'NO'}")
            for error in found.errors:
                self.stdout.write(f"  error: {error}")
            for name, fix in found.problems().items():
                self.stdout.write(f"  fix ({name.replace('_', ' ')}): {fix}")
        if not found.usable:
            raise CommandError("the provider lacks what the twin needs (see above)", returncode=1)

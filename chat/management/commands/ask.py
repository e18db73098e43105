"""Ask the twin one question from the terminal, through the real graph."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import uuid

from django.core.management.base import BaseCommand, CommandError

from chat.checkpoints import close_pools
from chat.models import Conversation
from chat.providers import get_provider
from chat.services import TurnRejected, conversation_create
from chat.turns.run import turn_run
from knowledge.search import warm_vocabulary

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Run one turn and print the streamed answer (or, with --json, every event as a JSON line)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("question")
        parser.add_argument("--thread", help="conversation id to continue (default: a new conversation)")
        parser.add_argument("--provider", help="offline, or the configured TWIN_PROVIDER")
        parser.add_argument("--json", action="store_true", help="print every event as a JSON line")

    def handle(self, *args, **options) -> None:
        try:
            provider = get_provider(options["provider"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        conversation = None
        if options["thread"]:
            try:
                conversation = Conversation.objects.get(pk=uuid.UUID(options["thread"]))
            except (ValueError, Conversation.DoesNotExist) as exc:
                raise CommandError(f"no conversation {options['thread']!r}") from exc
        # the search's translations, embedded as a serving process embeds them when it starts (else
        # this one turn would go without them, and answer otherwise than the site); without them
        # the turn still runs, as a serving process' first turns do
        try:
            warm_vocabulary()
        except Exception:
            logger.warning("ask: the knowledge base's vocabulary was not embedded", exc_info=True)
        if conversation is None:
            conversation = conversation_create()
        as_json = options["json"]
        out = sys.stdout

        async def emit(event: dict) -> None:
            if as_json:
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
            elif event["type"] == "token":
                out.write(event["text"])
            elif event["type"] == "trace":  # the answer is complete: the turn's log line follows
                out.write("\n")
            elif event["type"] == "error":
                out.write(f"\n[error: {event['code']}] {event['message']}")
            elif event["type"] == "done":
                out.write(f"\n[{event['outcome']}] thread {conversation.pk}\n")
            out.flush()

        async def main() -> None:
            try:
                await turn_run(conversation_id=conversation.pk, text=options["question"], emit=emit,
                               provider=provider)
            finally:
                await close_pools()

        try:
            asyncio.run(main())
        except TurnRejected as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc

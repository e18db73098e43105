"""Fail when any path of the agent graph runs a high-risk tool without ``request_approval``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from chat.agent.graph import build_graph
from chat.agent.verify_graph import high_risk_violations


class Command(BaseCommand):
    help = "Prove from the compiled graph that high-risk tools run only after the owner's approval."

    def handle(self, *args, **options) -> None:
        builder = build_graph()
        builder.compile()  # the graph as it runs: compiling validates the wiring first
        problems = high_risk_violations(builder)
        if problems:
            raise CommandError("high-risk tools can bypass request_approval:\n- " + "\n- ".join(problems))
        self.stdout.write(self.style.SUCCESS(
            f"ok: {len(builder.nodes)} nodes; high-risk tools reach execute_tools only through request_approval"))

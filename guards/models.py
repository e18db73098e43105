from __future__ import annotations

from django.db import models


class GuardIncident(models.Model):
    class Guard(models.TextChoices):
        INJECTION = "injection"
        CARD_NUMBER = "card_number"
        IBAN = "iban"
        OFF_TOPIC = "off_topic"
        BUDGET = "budget"
        TOO_LONG = "too_long"
        TURN_LIMIT = "turn_limit"
        RATE_LIMIT = "rate_limit"

    conversation = models.ForeignKey(
        "chat.Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    guard = models.CharField(max_length=20, choices=Guard.choices, db_index=True)
    rule = models.CharField(max_length=60, blank=True)
    excerpt = models.TextField(blank=True, help_text="The input, with sensitive numbers masked.")
    matched = models.CharField(max_length=200, blank=True, help_text="What the rule matched (masked).")
    view = models.CharField(max_length=20, blank=True, help_text="plain, joined, leet, base64, squashed, reversed "
                                                               "or embedding (the semantic screen).")
    ip_hash = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.guard} at {self.created_at:%Y-%m-%d %H:%M}"

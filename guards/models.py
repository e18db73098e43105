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
    # A refusal that repeats (a rate limit hit again and again) is one row per address, rule and
    # window, counted: a flood of refusals cannot write a flood of rows.
    count = models.PositiveIntegerField(default=1, help_text="Refusals this row stands for.")
    window_start = models.BigIntegerField(null=True, blank=True, help_text="Unix time of the counted window.")
    last_at = models.DateTimeField(null=True, blank=True, help_text="The latest refusal counted here.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(
            fields=["ip_hash", "guard", "rule", "window_start"], condition=models.Q(window_start__isnull=False),
            name="guards_incident_one_per_window")]

    def __str__(self) -> str:
        return f"{self.guard} at {self.created_at:%Y-%m-%d %H:%M}"


class CacheCounter(models.Model):
    """A counter of django-ratelimit's cache (guards/ratecache.py): one key, one window. Every
    per-visitor limit counts here (guards/limits.py)."""

    key = models.CharField(max_length=250, primary_key=True)
    value = models.BigIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.value}"


class OpenSocket(models.Model):
    """A visitor's open WebSocket (per IP hash); expires if its process died without closing it."""

    socket_id = models.CharField(max_length=64, unique=True)
    key = models.CharField(max_length=120, db_index=True)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.key


class LoginFailure(models.Model):
    """Failed admin logins counted in one window (guards/login.py): per name and address block,
    per name from browsers without its device cookie, or per device cookie. The key and the name
    are hashed with the secret key: a name someone typed (or a password typed into the name) is
    never kept."""

    key = models.CharField(max_length=64, primary_key=True)
    name_hash = models.CharField(max_length=64, db_index=True, help_text="Whose counts a success or "
                                                                           "unlock_login clears.")
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key[:12]}: {self.count}"

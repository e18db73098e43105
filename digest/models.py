from __future__ import annotations

from django.db import models


class DigestDay(models.Model):
    """One row per local day: whether that day's digest went out. The unique day, locked while
    the digest is built and sent, is what keeps two workers from both sending it."""

    class Outcome(models.TextChoices):
        WAITING = "", "not yet"
        SENT = "sent"
        NOTHING = "nothing", "nothing to say"
        FAILED = "failed", "failed (retried)"

    day = models.DateField(unique=True)
    outcome = models.CharField(max_length=8, choices=Outcome.choices, default=Outcome.WAITING, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    period_start = models.DateTimeField(null=True, blank=True, help_text="What the digest covered: since then.")
    counts = models.JSONField(default=dict, blank=True, help_text="How many of each section it held.")
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"digest of {self.day} ({self.get_outcome_display()})"


class DigestLink(models.Model):
    """An approve or reject link e-mailed in a digest. The link's signed token names the row and
    carries a random nonce whose hash is kept here: the signature says nobody altered it, the row
    says whether it was used (once) and until when it works. A link only leads to a confirmation
    page; the decision is a POST by a logged-in owner."""

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"

    approval = models.ForeignKey("approvals.PendingApproval", on_delete=models.CASCADE, related_name="+")
    decision = models.CharField(max_length=8, choices=Decision.choices)
    nonce_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.decision} #{self.approval_id} ({'used' if self.used_at else 'unused'})"

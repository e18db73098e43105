from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from twinsite.outbox import Outbound


class DigestDay(Outbound):
    """One row per local day: whether that day's digest went out. A row of the one outbox
    (``twinsite.outbox``): the unique day, leased while the digest is sent, is what keeps two
    workers from both sending it."""

    class Outcome(models.TextChoices):
        WAITING = "", "not yet"
        SENT = "sent"
        NOTHING = "nothing", "nothing to say"
        FAILED = "failed", "failed (retried)"

    day = models.DateField(unique=True)
    outcome = models.CharField(max_length=8, choices=Outcome.choices, default=Outcome.WAITING, blank=True)
    period_start = models.DateTimeField(null=True, blank=True, help_text="What the digest covered: since then.")
    counts = models.JSONField(default=dict, blank=True, help_text="How many of each section it held.")
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


class OwnerNotice(models.Model):
    """One message to the owner that contact requests wait: a bundle of the requests nobody had
    told the owner of yet, sent through each channel (``NoticeDelivery``). Its id is the
    ``Idempotency-Key`` of every attempt, so a receiver can drop a repeat. A test notice
    (``manage.py notify_owner --test``) names no request."""

    class Kind(models.TextChoices):
        REQUESTS = "requests", "contact requests"
        TEST = "test"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.REQUESTS)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"notice {str(self.id)[:8]} ({self.kind})"


class NoticeItem(models.Model):
    """A request in a notice; a request is in one notice at most (the owner is told once)."""

    notice = models.ForeignKey(OwnerNotice, on_delete=models.CASCADE, related_name="items")
    approval = models.OneToOneField("approvals.PendingApproval", on_delete=models.CASCADE,
                                    related_name="owner_notice_item")

    def __str__(self) -> str:
        return f"#{self.approval_id} in {self.notice}"


class NoticeDelivery(Outbound):
    """A notice through one channel: its attempts, the last error, and when it got there. A row of
    the one outbox (``twinsite.outbox``): leased while it is sent, so two workers never both send
    it; a worker killed before it records the send leaves a dead lease, and the next run repeats
    it once (same id)."""

    class Channel(models.TextChoices):
        EMAIL = "email", "e-mail"
        WEBHOOK = "webhook", "webhook"

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"  # a notice of requests is retried (next_attempt_at); a test notice is not
        DROPPED = "dropped", "dropped (every request was decided first)"
        MERGED = "merged", "merged (sent with a later notice)"

    notice = models.ForeignKey(OwnerNotice, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    target = models.CharField(max_length=200, help_text="The address, or the receiver's host and format.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING, db_index=True)

    class Meta:
        ordering = ["-notice__created_at", "channel"]
        verbose_name = _("notice delivery")
        verbose_name_plural = _("notice deliveries")
        constraints = [models.UniqueConstraint(fields=["notice", "channel"], name="notice_one_delivery_per_channel")]

    def __str__(self) -> str:
        return f"{self.get_channel_display()} {self.status}"

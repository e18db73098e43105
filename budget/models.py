from __future__ import annotations

from django.db import models


class BudgetDay(models.Model):
    """The meter of one budget day (local midnight to midnight). Every reservation locks this row,
    so the check and the reservation are one step: concurrent turns cannot all pass."""

    day = models.DateField(primary_key=True)
    spent_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    reserved_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"{self.day}: ${self.spent_usd} spent, ${self.reserved_usd} reserved"


class LedgerEntry(models.Model):
    """One model call's cost: reserved (worst case) before the call, settled to the real cost
    after it. A reservation of a call that died expires, settled at its reserved amount."""

    class Status(models.TextChoices):
        RESERVED = "reserved"
        SETTLED = "settled"
        EXPIRED = "expired"  # the turn died; charged at the reserved (worst-case) amount

    day = models.DateField(db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SETTLED, db_index=True)
    reserved_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    amount_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    conversation = models.ForeignKey("chat.Conversation", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    ip_hash = models.CharField(max_length=64, blank=True, db_index=True)
    turn = models.ForeignKey("chat.TurnLog", null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="ledger_entries")
    note = models.CharField(max_length=120, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"{self.day} ${self.amount_usd} ({self.status})"

from __future__ import annotations

from django.db import models


class LedgerEntry(models.Model):
    """One charge against a day's budget. The day's spend is the sum of its entries, in
    Postgres, so a restart cannot reset the meter."""

    day = models.DateField(db_index=True)
    amount_usd = models.DecimalField(max_digits=12, decimal_places=6)
    turn = models.OneToOneField(
        "chat.TurnLog", null=True, blank=True, on_delete=models.SET_NULL, related_name="ledger_entry"
    )
    note = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"{self.day} ${self.amount_usd}"

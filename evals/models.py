from __future__ import annotations

from django.db import models


class EvalRun(models.Model):
    kind = models.CharField(max_length=40, db_index=True)  # e.g. "retrieval"
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    config = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    passed = models.BooleanField(null=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.kind} run {self.pk}"


class EvalCase(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="cases")
    case_id = models.CharField(max_length=60)
    question = models.TextField()
    lang = models.CharField(max_length=8, blank=True)
    expected = models.JSONField(default=dict, blank=True)
    got = models.JSONField(default=dict, blank=True)
    passed = models.BooleanField()

    def __str__(self) -> str:
        return self.case_id

from __future__ import annotations

from django.db import models
from django.utils import timezone


class EvalRun(models.Model):
    """One run of one suite (tools, tasks, answers, guards, retrieval) against one provider."""

    suite = models.CharField(max_length=40, db_index=True)
    provider = models.CharField(max_length=40, blank=True, db_index=True)  # "" where no model is involved
    model = models.CharField(max_length=120, blank=True)
    git_commit = models.CharField(max_length=60, blank=True)  # "<sha>[-dirty]"
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    passed = models.BooleanField(null=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    config = models.JSONField(default=dict, blank=True)  # dataset and its sha256, fault injection, ...
    metrics = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["suite", "provider", "-started_at"], name="evals_run_suite_provider")]

    def __str__(self) -> str:
        return f"{self.suite} run {self.pk}"


class EvalCase(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="cases")
    case_id = models.CharField(max_length=60)
    question = models.TextField()
    lang = models.CharField(max_length=8, blank=True)
    expected = models.JSONField(default=dict, blank=True)
    actual = models.JSONField(default=dict, blank=True)
    passed = models.BooleanField()
    # The graded turn's trace (tool calls, retrieved passages, raw provider chunks); kept null
    # for cases that run no turn (guards, retrieval) and when old traces are purged.
    trace = models.ForeignKey("chat.AgentTrace", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")

    class Meta:
        ordering = ["run", "pk"]

    def __str__(self) -> str:
        return self.case_id

from __future__ import annotations

from django.db import models

ACTIVE = ("queued", "running")


class Job(models.Model):
    """A long owner action (knowledge sync, eval run) run by the worker, with its progress.

    The admin starts it (``ops.services.job_start``: a row and its queued task in one
    transaction) and shows how far it is; the worker's task records progress and the outcome.
    One job of a kind is active at a time (a database constraint: two clicks start one).
    """

    class Kind(models.TextChoices):
        KNOWLEDGE_SYNC = "knowledge_sync", "knowledge sync"
        EVAL_RUN = "eval_run", "eval run"
        KNOWLEDGE_IMPORT = "knowledge_import", "knowledge import"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    kind = models.CharField(max_length=20, choices=Kind.choices, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    requested_by = models.CharField(max_length=150, blank=True)
    task_id = models.CharField(max_length=64, blank=True, help_text="The queued task (django-tasks-db result id).")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    note = models.CharField(max_length=200, blank=True, help_text="What the job is doing now.")
    result = models.TextField(blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="The latest progress report.")

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["kind"], condition=models.Q(status__in=ACTIVE),
                                    name="job_one_active_per_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def percent(self) -> int | None:
        if not self.total:
            return None
        return min(100, round(100 * self.done / self.total))


class ProviderCheck(models.Model):
    """The latest ``manage.py check_provider`` result per provider and model (``make run`` runs
    it): what the model server could do when last asked, shown to staff in ``/api/health``."""

    provider = models.CharField(max_length=40)
    model = models.CharField(max_length=200)
    ok = models.BooleanField(help_text="It streamed text and tool calls and took the twin's prompt.")
    result = models.JSONField(default=dict)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provider", "model"], name="providercheck_one_per_model")]

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}: {'ok' if self.ok else 'problems'}"

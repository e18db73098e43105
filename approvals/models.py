from __future__ import annotations

from django.db import models


class PendingApproval(models.Model):
    """A high-risk tool call waiting for the owner; its LangGraph thread is interrupted."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    conversation = models.ForeignKey("chat.Conversation", on_delete=models.CASCADE, related_name="+")
    tool_call_id = models.CharField(max_length=120, unique=True)
    interrupt_id = models.CharField(max_length=64, blank=True)
    tool_name = models.CharField(max_length=60)
    arguments = models.JSONField(default=dict)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class ContactMessage(models.Model):
    approval = models.OneToOneField(PendingApproval, on_delete=models.PROTECT, related_name="contact_message")
    visitor_name = models.CharField(max_length=200)
    visitor_email = models.CharField(max_length=254, blank=True)
    body = models.TextField()
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"from {self.visitor_name}"

from __future__ import annotations

from django.db import models

from twinsite.outbox import Outbound


class PendingApproval(models.Model):
    """A high-risk tool call waiting for the owner; its LangGraph thread is interrupted.

    The row is the audit record: the arguments the model proposed (and their hash), where each
    came from, who decided what and when, the arguments that finally ran, and how the resume of
    the thread went. Decisions go through ``approvals.services`` only.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        EXPIRED = "expired"

    class Resume(models.TextChoices):
        WAITING = "", "waiting for a decision"
        QUEUED = "queued"
        DONE = "done"
        FAILED = "failed"

    conversation = models.ForeignKey("chat.Conversation", on_delete=models.CASCADE, related_name="+")
    tool_call_id = models.CharField(max_length=120)
    # The id of the call that runs the tool once approved (deterministic, see services).
    execution_call_id = models.CharField(max_length=64, unique=True)
    interrupt_id = models.CharField(max_length=64, blank=True, help_text="The thread's current interrupt.")
    tool_name = models.CharField(max_length=60)
    arguments = models.JSONField(default=dict, help_text="Exactly as the model proposed them.")
    arguments_sha256 = models.CharField(max_length=64)
    argument_origins = models.JSONField(
        default=dict, help_text="Per argument: typed (the visitor wrote it), model (the model made it), empty."
    )
    final_arguments = models.JSONField(null=True, blank=True, help_text="What ran: the owner's edit, if any.")
    final_arguments_sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    expires_at = models.DateTimeField(db_index=True)
    resume_status = models.CharField(max_length=8, choices=Resume.choices, default=Resume.WAITING, blank=True)
    resume_attempts = models.PositiveSmallIntegerField(default=0)
    resume_error = models.TextField(blank=True)
    resume_next_at = models.DateTimeField(null=True, blank=True, help_text="When the sweeper retries the resume.")
    resumed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "tool_call_id"], name="approval_unique_per_thread_call"),
            # One request waits per conversation: a second one is answered "already waiting".
            models.UniqueConstraint(fields=["conversation"], condition=models.Q(status="pending"),
                                    name="approval_one_pending_per_conversation"),
        ]
        permissions = [("decide", "Can approve, edit or reject contact requests")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.tool_name} ({self.status})"

    @property
    def effective_arguments(self) -> dict:
        return self.final_arguments if self.final_arguments is not None else self.arguments


class ContactMessage(Outbound):
    """A message the owner let through. One per approval; ``idempotency_key`` derives from the
    thread and the tool call, so a replayed resume or a second worker cannot create another."""

    approval = models.OneToOneField(PendingApproval, on_delete=models.PROTECT, related_name="contact_message")
    idempotency_key = models.CharField(max_length=64, unique=True)
    visitor_name = models.CharField(max_length=200, blank=True)
    visitor_email = models.CharField(max_length=254, blank=True)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"from {self.visitor_name or 'a visitor'}"


class GeneratedPassword(models.Model):
    """The admin account ``ensure_admin`` made with a generated password: the password hash the
    account had then (the same salted hash ``auth_user`` holds; never the password itself). While
    the account's hash is still this one, the printed password still opens the admin, and the
    admin's *Getting started* says so."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="generated_password")
    password = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"generated password of {self.user_id}"

    @property
    def still_in_use(self) -> bool:
        return self.user.password == self.password

"""Conversations and everything logged about a turn."""

from __future__ import annotations

import uuid

from django.db import models
from pgvector.django import VectorField

from chat.agent.state import Outcome


class Conversation(models.Model):
    # The id is also the LangGraph thread id of the conversation.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    visitor_ip_hash = models.CharField(max_length=64, blank=True, db_index=True)
    visitor_turns = models.PositiveIntegerField(default=0)
    title = models.CharField(max_length=200, blank=True)
    # The visitor's page language at the latest turn: the owner's decision is told in it.
    language = models.CharField(max_length=8, default="en")

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title or str(self.id)

    @property
    def thread_id(self) -> str:
        return str(self.id)


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    citations = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class ScreenVerdict(models.TextChoices):
    PASS = "pass"  # noqa: S105 (a verdict, not a password)
    SHIELD = "shield"
    REFUSE = "refuse"


class TurnLog(models.Model):
    Outcome = Outcome  # the graph's own list (chat.agent.state)
    ScreenVerdict = ScreenVerdict

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    user_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    assistant_message = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="turn"
    )
    outcome = models.CharField(max_length=24, choices=Outcome.choices, db_index=True)
    provider = models.CharField(max_length=40)
    model = models.CharField(max_length=120)
    input_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    node_latency_ms = models.JSONField(default=dict, blank=True)
    tool_rounds = models.PositiveSmallIntegerField(default=0)
    hallucination_risk = models.BooleanField(default=False)
    retracted = models.BooleanField(
        default=False, help_text="The uncited answer was withdrawn and the decline shown (TWIN_UNCITED=retract)")
    usage_estimated = models.BooleanField(
        default=False, help_text="The provider reported no usage: tokens and cost are the twin's estimate.")
    unsupported_claims = models.PositiveSmallIntegerField(
        default=0, db_index=True, help_text="Cited sentences their cited document does not say (knowledge.claims).")
    doubtful_claims = models.PositiveSmallIntegerField(
        default=0, db_index=True,
        help_text="Cited sentences the claim check doubts: kept from the visitor, shown to the owner.")
    claim_kinds = models.JSONField(
        default=dict, blank=True, help_text="The claim check's findings per kind and certainty: {kind: count}.")
    screen_verdict = models.CharField(
        max_length=8, choices=ScreenVerdict.choices, default=ScreenVerdict.PASS, db_index=True,
        help_text="The input screen's verdict: pass (the model), shield (answered without the model), refuse.")
    shield_reason = models.CharField(max_length=200, blank=True,
                                     help_text="Why the turn was answered without the model: the rule or score.")
    unknown_citations = models.JSONField(default=list, blank=True)
    state_tokens = models.PositiveIntegerField(default=0)
    view_tokens = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"turn {self.pk} ({self.outcome})"


class PromptSnapshot(models.Model):
    """System prompts, stored once per distinct text and referenced from traces."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.sha256[:12]


class AgentTrace(models.Model):
    """Why the agent said what it said: one per assistant turn, failed turns included. What the
    turn used and cost (provider, model, tokens, cost, latency per node) is on its TurnLog."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="trace")
    turn = models.OneToOneField(TurnLog, null=True, on_delete=models.CASCADE, related_name="trace")
    system_prompt = models.ForeignKey(PromptSnapshot, null=True, blank=True, on_delete=models.PROTECT)
    knowledge_sha256 = models.CharField(max_length=64, blank=True)
    retrieved = models.JSONField(default=list, blank=True)
    guard = models.JSONField(default=dict, blank=True, help_text="The input guards' verdict and semantic scores.")
    tool_calls = models.JSONField(default=list, blank=True)
    provider_responses = models.JSONField(default=list, blank=True)
    unsupported = models.JSONField(default=list, blank=True,
                                   help_text="Each cited sentence its document does not say: sentence, title, reason.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        # the why panel, /metrics, the API docs and the health details: what a turn did and what
        # the site runs on, for staff given it (chat.view_trace), not for every staff account
        permissions = [("view_trace", "Can see turn traces and operational details")]

    def __str__(self) -> str:
        return f"trace of message {self.message_id}"


class Feedback(models.Model):
    """One rating per answer (an answer belongs to one visitor's conversation); a second replaces it."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="feedback")
    rating = models.SmallIntegerField(choices=[(1, "up"), (-1, "down")])
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{'+' if self.rating > 0 else '-'} on {self.message_id}"


class UnansweredQuestion(models.Model):
    """What visitors wanted to know and the knowledge base could not answer."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    question = models.TextField()
    reason = models.CharField(max_length=40)
    # The question's embedding (primary model), to group similar questions in the admin.
    embedding = VectorField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # What the owner did about it: taught the answer, or dismissed it ("not something I want
    # answered"); either takes it out of the groups to look at.
    answered_by = models.ForeignKey("knowledge.TaughtAnswer", null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="questions")
    dismissed_by = models.CharField(max_length=150, blank=True)
    handled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.question[:80]


class CheckpointThread(models.Model):
    """Read-only view over LangGraph's ``checkpoints`` table: one row per thread, its latest
    checkpoint. The table belongs to ``langgraph-checkpoint-postgres``; we never write it."""

    thread_id = models.TextField(primary_key=True)
    checkpoint_id = models.TextField()
    parent_checkpoint_id = models.TextField(null=True)
    checkpoint_count = models.IntegerField()
    step = models.IntegerField(null=True)
    source = models.TextField(null=True)
    pending_interrupts = models.IntegerField()

    class Meta:
        managed = False
        db_table = "twinsite_checkpoint_threads"
        ordering = ["-checkpoint_id"]

    def __str__(self) -> str:
        return self.thread_id

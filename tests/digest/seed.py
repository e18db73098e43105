"""A seeded day for the digest: one of everything it reports, and some things it must leave out
(older than the period, decided requests, unflagged turns)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.utils import timezone

from approvals.models import PendingApproval
from approvals.services import approval_request
from budget.models import BudgetDay
from budget.selectors import budget_day
from chat.models import AgentTrace, Feedback, Message, TurnLog, UnansweredQuestion
from chat.services import conversation_create
from chat.turns.decisions import approval_decide
from guards.models import GuardIncident
from knowledge.embedders import get_embedders

TOM = "I'm Tom, tom@example.com. Please pass on that I'd like to talk about a data platform project."
OLD = dt.timedelta(days=3)


def _backdate(model, pk, when) -> None:
    model.objects.filter(pk=pk).update(created_at=when)


def request(text: str = TOM, *, name: str = "Tom", email: str = "tom@example.com",
            message: str = "I'd like to talk about a data platform project.") -> PendingApproval:
    conversation = conversation_create()
    conversation.messages.create(role="user", content=text)
    conversation.messages.create(role="assistant", content="I've drafted your message for Mira.")
    approval, _ = approval_request(
        conversation_id=conversation.pk, tool_call_id="call_1", tool_name="draft_contact_message",
        arguments={"visitor_name": name, "visitor_email": email, "message": message}, visitor_texts=[text])
    return approval


def turn(question: str, answer: str, *, hallucination_risk: bool = False, unknown_citations=(),
         when: dt.datetime | None = None, provider: str = "offline", model: str = "offline-extractive",
         retracted: bool = False) -> TurnLog:
    conversation = conversation_create()
    user = Message.objects.create(conversation=conversation, role="user", content=question)
    assistant = Message.objects.create(conversation=conversation, role="assistant", content=answer)
    log = TurnLog.objects.create(conversation=conversation, user_message=user, assistant_message=assistant,
                                 outcome="declined" if retracted else "answered", provider=provider, model=model,
                                 hallucination_risk=hallucination_risk, retracted=retracted,
                                 unknown_citations=list(unknown_citations))
    AgentTrace.objects.create(message=assistant, turn=log)
    if when is not None:
        _backdate(TurnLog, log.pk, when)
    return log


def seed_day(now: dt.datetime | None = None, *, approvals: bool = True) -> dict:
    now = now or timezone.now()
    seeded: dict = {}
    if approvals:
        seeded["waiting"] = request()
        seeded["model_made"] = request("Can you forward my question about her rates? I'm Anna.", name="Anna",
                                       email="anna@invented.example", message="Anna asks about rates.")
        decided = request("I'm Bob, bob@example.com, pass it on please.", name="Bob", email="bob@example.com",
                          message="Bob's message.")
        approval_decide(approval_id=decided.pk, decision="reject", actor="owner", reason="spam")

    embedder = get_embedders()[0]
    conversation = conversation_create()
    for question in ("what is her day rate", "Does she speak Japanese?", "What is her day rate?",
                     "What is her day rate?"):  # four visitors; grouped under the wording most of them used
        UnansweredQuestion.objects.create(conversation=conversation_create(), question=question, reason="no_source",
                                          embedding=embedder.query(question))
    old = UnansweredQuestion.objects.create(conversation=conversation, question="An old question about sailing",
                                            reason="no_source", embedding=embedder.query("sailing"))
    _backdate(UnansweredQuestion, old.pk, now - OLD)

    for guard, rule in (("injection", "ignore_previous"), ("injection", "ignore_previous"),
                        ("card_number", "luhn"), ("off_topic", "")):
        GuardIncident.objects.create(guard=guard, rule=rule, excerpt="(masked)")
    old_incident = GuardIncident.objects.create(guard="iban", rule="mod97", excerpt="(masked)")
    _backdate(GuardIncident, old_incident.pk, now - OLD)

    liked = turn("What has she built?", "Ledgerline, a payments ledger.")
    disliked = turn("What does she charge?", "Her rate depends on the project.")
    Feedback.objects.create(message=liked.assistant_message, rating=1)
    Feedback.objects.create(message=disliked.assistant_message, rating=-1, comment="Too vague about pricing")
    risky = turn("Has she worked for NASA?", "Yes, on the Artemis ground systems.", hallucination_risk=True)
    uncited = turn("Which projects used Kafka?", "Ledgerline and Atlantis.", unknown_citations=["Project: Atlantis"])
    turn("Where is she based?", "Amsterdam.")  # fine: not flagged
    turn("Old risky one", "Old answer.", hallucination_risk=True, when=now - OLD)

    BudgetDay.objects.update_or_create(day=budget_day(now), defaults={"spent_usd": Decimal("0.42")})
    return seeded | {"risky": risky, "uncited": uncited}

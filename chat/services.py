"""Writes of chat's own tables outside a turn's run: conversations, the visitor's message,
feedback, and the trace purge. A turn itself is ``chat.turns.run``; its record ``chat.turns.records``."""

from __future__ import annotations

import datetime as dt
import uuid

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from chat.models import AgentTrace, Conversation, Feedback, Message, PromptSnapshot, UnansweredQuestion
from chat.texts import text as say
from guards.rules import mask_sensitive
from twinsite.clientip import address_hash


class TurnRejected(Exception):
    """A turn refused before anything ran: ``code`` (docs/PROTOCOL.md) and the values its
    sentence needs (``chat.texts``, key ``error.<code>``)."""

    def __init__(self, code: str, **params: object) -> None:
        self.code = code
        self.params = params
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return self.text("en")

    def text(self, lang: str | None) -> str:
        return say(f"error.{self.code}", lang, **self.params)


class UnknownMessage(Exception):
    """No answer with this id in the visitor's conversation."""


class CommentTooLong(ValueError):
    """A feedback comment over ``FEEDBACK_COMMENT_CHARS``."""


FEEDBACK_COMMENT_CHARS = 2000


def ip_hash(ip: str) -> str:
    return address_hash(ip)


def conversation_group(conversation_id: uuid.UUID | str) -> str:
    """The channel-layer group of a conversation's open sockets."""
    return f"conversation.{uuid.UUID(str(conversation_id)).hex}"


@transaction.atomic
def conversation_create(*, visitor_ip: str = "") -> Conversation:
    return Conversation.objects.create(visitor_ip_hash=ip_hash(visitor_ip))


@transaction.atomic
def message_create_user(*, conversation_id: uuid.UUID | str, text: str, lang: str = "en") -> Message:
    """The visitor's question, counted against the conversation's turns in the same statement
    that locks the conversation (the check and the count in one ``UPDATE``; a second read only
    when it counted nothing: the conversation is at its limit, or missing)."""
    counted = Conversation.objects.filter(pk=conversation_id, visitor_turns__lt=settings.TWIN_MAX_TURNS).update(
        visitor_turns=F("visitor_turns") + 1, language=lang,
        title=Case(When(title="", then=Value(text[:120])), default=F("title")),
        updated_at=timezone.now(),  # update() bypasses auto_now
    )
    if not counted:
        Conversation.objects.get(pk=conversation_id)  # DoesNotExist as before for a missing one
        raise TurnRejected("turn_limit", max=settings.TWIN_MAX_TURNS)
    return Message.objects.create(conversation_id=conversation_id, role=Message.Role.USER, content=text)


@transaction.atomic
def feedback_create(*, conversation_id: uuid.UUID | str | None, message_id: int, rating: int,
                    comment: str = "") -> tuple[Feedback, bool]:
    """Rate an answer of the visitor's own conversation; rating it again replaces the first
    rating. Returns (feedback, created); raises UnknownMessage for another conversation's answer
    (checked first: nothing about a stranger's answer is told), CommentTooLong for a long comment."""
    message = Message.objects.filter(pk=message_id, role=Message.Role.ASSISTANT,
                                     conversation_id=conversation_id).first()
    if message is None:
        raise UnknownMessage(message_id)
    if len(comment) > FEEDBACK_COMMENT_CHARS:
        raise CommentTooLong(len(comment))
    # stored (and e-mailed in the owner's digest) with card and account numbers masked
    return Feedback.objects.update_or_create(message=message, defaults={"rating": rating,
                                                                        "comment": mask_sensitive(comment)})


@transaction.atomic
def traces_purge(*, before: dt.datetime, dry_run: bool = False) -> int:
    """Delete traces older than ``before`` and the prompt snapshots no trace uses any more."""
    old = AgentTrace.objects.filter(created_at__lt=before)
    count = old.count()
    if not dry_run:
        old.delete()
        PromptSnapshot.objects.filter(agenttrace__isnull=True).delete()
    return count


# --- unanswered questions: taught, reopened, put aside -------------------------------------------------

def questions_answered(*, ids: list[int], answer) -> int:
    """The open questions of ``ids`` answered by a taught answer (``knowledge.TaughtAnswer``)."""
    return UnansweredQuestion.objects.filter(pk__in=ids, answered_by__isnull=True).update(
        answered_by=answer, handled_at=timezone.now())


def questions_reopened(*, answer) -> int:
    """The questions a deleted taught answer answered are open again: nobody answers them now."""
    return UnansweredQuestion.objects.filter(answered_by=answer).update(handled_at=None)


def questions_put_aside(*, ids: list[int], by: str) -> int:
    """Open questions the owner does not want answered: out of the groups, kept in the list."""
    return UnansweredQuestion.objects.filter(pk__in=ids, handled_at__isnull=True).update(
        dismissed_by=by, handled_at=timezone.now())

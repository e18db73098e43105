"""Writes for the approval queue and the messages it lets through.

Every read or decision is scoped to a conversation where the caller has one: an approval
belongs to one thread. A decision is recorded here in its transaction; the paused thread is
chat's, so ``chat.turns.decisions`` records it through ``approval_decision_record`` and enqueues the
resume after commit. The worker's sweep (``chat.turns.decisions.approvals_sweep``) re-enqueues what a
crash or a failure left behind (``resumes_due_claim``, ``deliveries_sweep``), so every path is
idempotent and re-checks the state first. Nothing here imports chat.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
import uuid
from collections.abc import Iterable

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from approvals.drafts import DRAFTS, arguments_parse
from approvals.errors import AlreadyDecided, AlreadyPending, InvalidDecision, NotApproved, UnknownApproval
from approvals.models import ContactMessage, GeneratedPassword, PendingApproval
from approvals.tasks import contact_message_deliver_task
from twinsite import outbox
from twinsite.retry import retry_at

log = logging.getLogger(__name__)

DECISIONS = ("approve", "edit", "reject")


# --- identity ------------------------------------------------------------------------------------

def arguments_hash(arguments: dict) -> str:
    """The hash of canonical JSON: equal arguments hash equal whatever their key order."""
    canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def execution_call_id(conversation_id: uuid.UUID | str, tool_call_id: str) -> str:
    """The id of the call that runs an approved tool: derived, so a re-run node makes the same one."""
    return "call_" + hashlib.sha256(f"{conversation_id}:{tool_call_id}:approved".encode()).hexdigest()[:24]


def idempotency_key(conversation_id: uuid.UUID | str, tool_call_id: str) -> str:
    return hashlib.sha256(f"{conversation_id}:{tool_call_id}".encode()).hexdigest()


_SPACE = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def argument_origins(arguments: dict, visitor_texts: Iterable[str]) -> dict[str, str]:
    """``typed`` when the value appears in what the visitor wrote in this conversation, ``model``
    when the model supplied it, ``empty`` for no value. A model-made e-mail address is a warning."""
    written = _normalise("\n".join(visitor_texts))
    origins: dict[str, str] = {}
    for name, value in arguments.items():
        if value in (None, ""):
            origins[name] = "empty"
        else:
            origins[name] = "typed" if _normalise(str(value)) in written else "model"
    return origins


# --- requests ------------------------------------------------------------------------------------

@transaction.atomic
def approval_request(*, conversation_id: uuid.UUID | str, tool_call_id: str, tool_name: str,
                     arguments: dict, visitor_texts: Iterable[str] = ()) -> tuple[PendingApproval, bool]:
    """Queue a high-risk call for the owner; returns (approval, created).

    Idempotent per (conversation, tool call): a re-run node gets the same row. Raises
    AlreadyPending when another request of this conversation is still waiting.
    """
    existing = PendingApproval.objects.filter(conversation_id=conversation_id, tool_call_id=tool_call_id).first()
    if existing is not None:
        if existing.status != PendingApproval.Status.PENDING or existing.arguments_sha256 != arguments_hash(arguments):
            # generate() re-mints repeated ids, so this is a replayed call of a decided request
            raise AlreadyDecided(f"call {tool_call_id} was already decided", existing)
        return existing, False
    other = PendingApproval.objects.filter(conversation_id=conversation_id,
                                           status=PendingApproval.Status.PENDING).first()
    if other is not None:
        raise AlreadyPending(f"approval {other.pk} of this conversation is still waiting", other)
    try:
        with transaction.atomic():
            approval = PendingApproval.objects.create(
                conversation_id=conversation_id, tool_call_id=tool_call_id,
                execution_call_id=execution_call_id(conversation_id, tool_call_id),
                tool_name=tool_name, arguments=arguments, arguments_sha256=arguments_hash(arguments),
                argument_origins=argument_origins(arguments, visitor_texts),
                expires_at=timezone.now() + dt.timedelta(seconds=settings.TWIN_APPROVAL_TTL),
            )
    except IntegrityError:
        # a concurrent request won the one-pending-per-conversation constraint
        other = PendingApproval.objects.filter(conversation_id=conversation_id,
                                               status=PendingApproval.Status.PENDING).first()
        raise AlreadyPending("another request of this conversation is waiting", other) from None
    return approval, True


def approval_record_interrupt(*, approval_id: int, conversation_id: uuid.UUID | str, interrupt_id: str) -> None:
    """Remember the thread's current interrupt id (a new one after each visitor turn)."""
    PendingApproval.objects.filter(pk=approval_id, conversation_id=conversation_id).update(interrupt_id=interrupt_id)


# --- decisions -----------------------------------------------------------------------------------

def _validated_edit(approval: PendingApproval, edits: dict) -> dict:
    shape = DRAFTS.get(approval.tool_name)  # the draft's own model judges an edit
    if shape is None:
        raise InvalidDecision(f"unknown tool {approval.tool_name!r}", approval)
    unknown = set(edits) - set(approval.arguments)
    if unknown:
        raise InvalidDecision(f"unknown field(s): {', '.join(sorted(unknown))}; "
                              f"fields are {', '.join(approval.arguments)}", approval)
    merged = {**approval.arguments, **edits}
    try:
        return arguments_parse(shape, json.dumps(merged)).model_dump()
    except ValueError as exc:
        raise InvalidDecision(str(exc), approval) from exc


@transaction.atomic
def approval_decision_record(*, approval_id: int, decision: str, actor: str, reason: str = "",
                    edits: dict | None = None, conversation_id: uuid.UUID | str | None = None) -> PendingApproval:
    """Record the owner's decision: approve, edit (then approve), reject (with a reason) or expire.
    Consoles call ``chat.turns.decisions.approval_decide``, which calls this and resumes the thread.

    The row is locked: of two clicks, two tabs or two staff, one wins and the other gets
    AlreadyDecided. The thread's resume is chat's (``chat.turns.decisions.approval_decide`` calls this
    and enqueues it after commit); ``resume_next_at`` is the sweeper's safety net.
    """
    if decision not in (*DECISIONS, "expire"):
        raise InvalidDecision(f"decision must be one of {', '.join(DECISIONS)}")
    query = PendingApproval.objects.select_for_update().filter(pk=approval_id)
    if conversation_id is not None:
        query = query.filter(conversation_id=conversation_id)
    approval = query.first()
    if approval is None:
        raise UnknownApproval(f"no approval {approval_id}")
    if approval.status != PendingApproval.Status.PENDING:
        raise AlreadyDecided(f"approval {approval.pk} was already {approval.status}"
                             + (f" by {approval.decided_by}" if approval.decided_by else ""), approval)
    reason = reason.strip()
    now = timezone.now()
    if decision == "reject":
        if not reason:
            raise InvalidDecision("a rejection needs a reason", approval)
        approval.status = PendingApproval.Status.REJECTED
    elif decision == "expire":
        approval.status = PendingApproval.Status.EXPIRED
        reason = reason or "no decision within the approval period"
    else:
        approval.status = PendingApproval.Status.APPROVED
        final = _validated_edit(approval, edits or {}) if decision == "edit" else approval.arguments
        approval.final_arguments = final
        approval.final_arguments_sha256 = arguments_hash(final)
    approval.decided_by = actor[:150]
    approval.decided_at = now
    approval.reason = reason
    approval.resume_status = PendingApproval.Resume.QUEUED
    approval.resume_next_at = now + dt.timedelta(seconds=60)  # the sweeper's safety net
    approval.save()
    log.info("approval %s %s by %s", approval.pk, approval.status, approval.decided_by)
    return approval


def approval_resume_finished(*, approval_id: int, error: str = "", busy: bool = False, note: str = "") -> None:
    """Record how a resume went; a failure is retried by the sweeper with backoff. A busy
    conversation (the visitor is mid-turn) is not a failure: retried soon, not counted."""
    with transaction.atomic():
        approval = PendingApproval.objects.select_for_update().get(pk=approval_id)
        if busy:
            approval.resume_next_at = timezone.now() + dt.timedelta(seconds=10)
            approval.save(update_fields=["resume_next_at"])
            return
        approval.resume_attempts += 1
        if error:
            approval.resume_status = PendingApproval.Resume.FAILED
            approval.resume_error = error[:2000]
            approval.resume_next_at = retry_at(approval.resume_attempts, base=60, cap=3600)
        else:
            approval.resume_status = PendingApproval.Resume.DONE
            approval.resume_error = note
            approval.resumed_at = timezone.now()
            approval.resume_next_at = None
        approval.save(update_fields=["resume_attempts", "resume_status", "resume_error", "resume_next_at",
                                     "resumed_at"])


# --- the approved action -------------------------------------------------------------------------

@transaction.atomic
def contact_message_create(*, conversation_id: uuid.UUID | str, call_id: str, arguments: dict) -> ContactMessage:
    """Record an approved contact message exactly once and queue its e-mail to the owner.

    Re-checked here, whatever the graph says: the approval must be of this conversation, approved,
    and its arguments (the owner's edit, if any) must hash to what is about to run.
    """
    approval = PendingApproval.objects.select_for_update().filter(
        conversation_id=conversation_id, execution_call_id=call_id).first()
    if approval is None or approval.status != PendingApproval.Status.APPROVED:
        raise NotApproved(f"tool call {call_id} has no approval from the owner")
    if arguments_hash(arguments) != approval.final_arguments_sha256:
        raise NotApproved("the arguments differ from what the owner approved")
    message, created = ContactMessage.objects.get_or_create(
        idempotency_key=idempotency_key(conversation_id, approval.tool_call_id),
        defaults={"approval": approval, "visitor_name": arguments.get("visitor_name") or "",
                  "visitor_email": arguments.get("visitor_email") or "", "body": arguments["message"]},
    )
    if created:
        transaction.on_commit(lambda: _enqueue_delivery(message.pk), robust=True)
    return message


def _enqueue_delivery(message_id: int) -> None:
    contact_message_deliver_task.enqueue(message_id)


# --- the worker's sweep --------------------------------------------------------------------------

def resumes_due_claim(*, now: dt.datetime) -> list[int]:
    """Decided requests whose resume a crash or a failure left behind, due now. Each is pushed
    two minutes ahead, so a second worker sweeping meanwhile does not enqueue it again."""
    due = list(PendingApproval.objects.filter(
        resume_status__in=[PendingApproval.Resume.QUEUED, PendingApproval.Resume.FAILED],
        resume_next_at__lte=now, resume_attempts__lt=settings.TWIN_RESUME_MAX_ATTEMPTS,
    ).values_list("pk", flat=True))
    PendingApproval.objects.filter(pk__in=due).update(resume_next_at=now + dt.timedelta(seconds=120))
    return due


def deliveries_sweep(*, now: dt.datetime) -> int:
    """Re-enqueue the e-mails of approved messages that a crash or a failure left unsent."""
    deliveries = 0
    undelivered = outbox.due(ContactMessage.objects.filter(
        sent_at__isnull=True, attempts__lt=10, created_at__lte=now - dt.timedelta(seconds=30)), now)
    for message_id in undelivered.values_list("pk", flat=True):
        ContactMessage.objects.filter(pk=message_id).update(next_attempt_at=now + dt.timedelta(seconds=120))
        _enqueue_delivery(message_id)
        deliveries += 1
    return deliveries


# --- the data lifecycle --------------------------------------------------------------------------

@transaction.atomic
def approvals_forget(*, conversation_ids) -> int:
    """Delete the requests of these conversations and the messages they let through (retention
    purge, a visitor's deletion request); callers check ``selectors.unsettled_approvals`` first.
    What was e-mailed stays in the owner's mailbox."""
    ContactMessage.objects.filter(approval__conversation_id__in=conversation_ids).delete()
    # requests only: their digest links go with them (cascade) and are not counted
    return PendingApproval.objects.filter(conversation_id__in=conversation_ids).delete()[1].get(
        "approvals.PendingApproval", 0)


def generated_password_rehashed(*, user, before: str) -> None:
    """Keep following the printed password when a login hashed it again: Django raises a hash's
    work factor at the login that checks it, which changes the hash and not the password. Only a
    generated password whose hash was ``before`` the login moves along."""
    if before and user.password != before:
        GeneratedPassword.objects.filter(user=user, password=before).update(password=user.password)

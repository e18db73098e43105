"""E-mailing an approved contact message to the owner, exactly once (run by the worker's task)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from approvals.errors import DeliveryFailed
from approvals.models import ContactMessage
from guards.scrub import scrub_text
from twinsite.retry import retry_at

log = logging.getLogger(__name__)


def contact_message_deliver(*, message_id: int) -> bool:
    """E-mail the message to the owner; True when this call sent it.

    The row stays locked while the backend takes the mail, so two workers cannot both send it;
    ``sent_at`` is set only after the backend accepted it. A failure is recorded (visible in the
    admin) and raised, and the sweeper retries with backoff.
    """
    with transaction.atomic():
        message = ContactMessage.objects.select_for_update().select_related("approval").get(pk=message_id)
        if message.sent_at is not None:
            return False
        try:
            _contact_email(message).send(fail_silently=False)
        except Exception as exc:  # any backend failure: record it, retry later
            error = scrub_text(f"{type(exc).__name__}: {exc}")
        else:
            message.sent_at = timezone.now()
            message.send_attempts += 1
            message.last_error = ""
            message.next_attempt_at = None
            message.save(update_fields=["sent_at", "send_attempts", "last_error", "next_attempt_at"])
            return True
        message.send_attempts += 1
        message.last_error = error[:2000]
        message.next_attempt_at = retry_at(message.send_attempts, base=60, cap=3600)
        message.save(update_fields=["send_attempts", "last_error", "next_attempt_at"])
    log.warning("contact message %s not delivered: %s", message_id, error)
    raise DeliveryFailed(error)


def _contact_email(message: ContactMessage) -> EmailMessage:
    approval = message.approval
    sender = message.visitor_name or "a visitor"
    lines = [
        f"{sender} sent you a message through your digital twin (approval #{approval.pk}).",
        "",
        f"Name:   {message.visitor_name or '-'}",
        f"E-mail: {message.visitor_email or '-'}",
        "",
        message.body,
    ]
    if approval.final_arguments != approval.arguments:
        lines += ["", "(You edited this message before approving it.)"]
    headers = {"Message-ID": f"<{message.idempotency_key}@twinsite>"}  # duplicates are recognisable
    reply_to = [message.visitor_email] if "@" in message.visitor_email else None
    return EmailMessage(subject=f"Message from {sender} via your digital twin", body="\n".join(lines),
                        to=[settings.TWIN_OWNER_EMAIL], reply_to=reply_to, headers=headers)

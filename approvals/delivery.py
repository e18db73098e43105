"""E-mailing an approved contact message to the owner, exactly once (run by the worker's task),
through the one outbox (``twinsite.outbox``): claimed in a short transaction, mailed with no
transaction open, settled in another. The mail is in the owner's language (``TWIN_OWNER_LANGUAGE``)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import EmailMessage
from django.utils import translation
from django.utils.translation import gettext as _

from approvals.errors import DeliveryFailed
from approvals.models import ContactMessage
from guards.scrub import scrub_text
from twinsite import outbox

log = logging.getLogger(__name__)


def contact_message_deliver(*, message_id: int) -> bool:
    """E-mail the message to the owner; True when this call sent it.

    ``sent_at`` is set only after the backend accepted it. A failure is recorded (visible in the
    admin) and raised, and the sweeper retries with the outbox's back-off. Another sender holding
    it, or a message already sent, is no failure: False.
    """
    message, _why = outbox.claim(ContactMessage.objects.select_related("approval"), message_id,
                                 check=outbox.unsent)
    if message is None:
        return False
    try:
        contact_email(message).send(fail_silently=False)
    except Exception as exc:  # any backend failure: record it, retry later
        error = scrub_text(f"{type(exc).__name__}: {exc}")
        outbox.settle_failed(message, error)
        log.warning("contact message %s not delivered: %s", message_id, error)
        raise DeliveryFailed(error) from None
    outbox.settle_sent(message)
    return True


def contact_email(message: ContactMessage) -> EmailMessage:
    approval = message.approval
    with translation.override(settings.TWIN_OWNER_LANGUAGE):
        sender = message.visitor_name or _("a visitor")
        lines = [
            _("%(sender)s sent you a message through your digital twin (approval #%(id)s).")
            % {"sender": sender, "id": approval.pk},
            "",
            f"{_('Name')}:   {message.visitor_name or '-'}",
            f"{_('E-mail')}: {message.visitor_email or '-'}",
            "",
            message.body,
        ]
        if approval.final_arguments != approval.arguments:
            lines += ["", _("(You edited this message before approving it.)")]
        subject = _("Message from %(sender)s via your digital twin") % {"sender": sender}
    headers = {"Message-ID": outbox.message_id(message.idempotency_key)}  # duplicates are recognisable
    reply_to = [message.visitor_email] if "@" in message.visitor_email else None
    return EmailMessage(subject=subject, body="\n".join(lines), to=[settings.TWIN_OWNER_EMAIL],
                        reply_to=reply_to, headers=headers)

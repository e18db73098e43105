"""Sending the owner's digest: rendered from templates in the owner's language, plain text with
an HTML alternative, to ``TWIN_OWNER_EMAIL``; at most once a day, whichever worker gets there.

The day's row (``DigestDay``, unique per local date) is locked while the digest is built and
sent, so a second worker waits and then finds it done. A failed send is recorded and retried
with backoff; the links it would have carried are rolled back with it.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone, translation

from approvals.models import PendingApproval
from digest.links import link_create, links_forget
from digest.models import DigestDay
from digest.selectors import digest_content
from guards.scrub import scrub_text
from twinsite import outbox

log = logging.getLogger(__name__)
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass
class Digest:
    subject: str
    text: str
    html: str
    content: dict

    @property
    def has_news(self) -> bool:
        return self.content["has_news"]


def digest_render(content: dict, *, language: str | None = None) -> Digest:
    """Subject, plain text and HTML in the owner's language (``TWIN_OWNER_LANGUAGE``)."""
    with translation.override(language or settings.TWIN_OWNER_LANGUAGE):
        context = {**content, "language": translation.get_language()}
        subject = " ".join(render_to_string("digest/subject.txt", context).split())
        # the text template is written for reading, not for whitespace: squeeze its blank runs
        lines = (line.rstrip() for line in render_to_string("digest/email.txt", context).splitlines())
        text = _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip() + "\n"
        return Digest(subject=subject, text=text, html=render_to_string("digest/email.html", context),
                      content=content)


def digest_build(*, now: dt.datetime | None = None, with_links: bool = True,
                 nonces: list[str] | None = None) -> Digest:
    """The digest as it would go out now. With links, each waiting request gets a fresh approve
    and reject link (rows written, committed before the mail goes: ``digest_send``); their
    nonces are added to ``nonces``, so a mail that fails can take its links along."""
    now = now or timezone.now()
    content = digest_content(now=now)
    nonces = [] if nonces is None else nonces
    if with_links and content["has_news"]:
        approvals = {a.pk: a for a in PendingApproval.objects.filter(pk__in=[i["id"] for i in content["approvals"]])}
        for item in content["approvals"]:
            for decision in ("approve", "reject"):
                nonces.append(secrets.token_urlsafe(16))
                item[f"{decision}_url"] = link_create(approval=approvals[item["id"]], decision=decision, now=now,
                                                      nonce=nonces[-1])
    return digest_render(content)


def _message(digest: Digest, key: str) -> EmailMultiAlternatives:
    headers = {"Auto-Submitted": "auto-generated", "Message-ID": outbox.message_id(key)}  # a repeat is recognisable
    message = EmailMultiAlternatives(subject=digest.subject, body=digest.text, to=[settings.TWIN_OWNER_EMAIL],
                                     headers=headers)
    message.attach_alternative(digest.html, "text/html")
    return message


def digest_send(*, now: dt.datetime | None = None, force: bool = False) -> tuple[str, Digest | None]:
    """Send today's digest unless it went out already (``force``: send anyway, as the command
    does). Returns (outcome, digest): ``sent``, ``nothing`` (nothing to say: no mail),
    ``already`` (another run did it, or has it now), ``failed`` (recorded; the worker retries
    later). The day's row is a row of the one outbox (``twinsite.outbox``): the mail is sent with
    no transaction open. The one-click links are committed before the mail goes, so every link
    the owner gets works; a mail that fails takes its links along."""
    now = now or timezone.now()
    day = timezone.localdate(now)
    DigestDay.objects.bulk_create([DigestDay(day=day)], ignore_conflicts=True)

    def check(record: DigestDay) -> str | None:
        done = record.outcome in (DigestDay.Outcome.SENT, DigestDay.Outcome.NOTHING)
        return "already" if done and not force else None

    record, _why = outbox.claim(DigestDay.objects, DigestDay.objects.get(day=day).pk, check=check, now=now)
    if record is None:
        return "already", None
    nonces: list[str] = []
    try:
        digest = digest_build(now=now, nonces=nonces)
        if digest.has_news:
            _message(digest, record.idempotency_key).send(fail_silently=False)
    except Exception as exc:  # any backend failure: record it, retry with backoff
        links_forget(nonces)  # the links go if the mail does not
        error = scrub_text(f"{type(exc).__name__}: {exc}")
        outbox.settle_failed(record, error, now=now, outcome=DigestDay.Outcome.FAILED)
        log.warning("digest of %s not sent: %s", day, error)
        return "failed", None
    covered = {"period_start": digest.content["since"], "counts": digest.content["counts"]}
    if digest.has_news:
        outbox.settle_sent(record, now=now, outcome=DigestDay.Outcome.SENT, **covered)
    else:
        outcome = record.outcome if record.outcome == DigestDay.Outcome.SENT else DigestDay.Outcome.NOTHING
        outbox.release(record, outcome=outcome, last_error="", next_attempt_at=None, **covered)
    log.info("digest of %s: %s %s", day, "sent" if digest.has_news else "nothing to say", digest.content["counts"])
    return ("sent" if digest.has_news else "nothing"), digest


def digest_due(now: dt.datetime | None = None) -> bool:
    """Whether the worker should send today's digest now: past ``TWIN_DIGEST_TIME`` (local), not
    yet sent or found empty today, and not waiting out a failure's backoff. One cheap query."""
    if settings.TWIN_DIGEST_TIME is None:
        return False
    now = now or timezone.now()
    local = timezone.localtime(now)
    hour, minute = settings.TWIN_DIGEST_TIME
    if (local.hour, local.minute) < (hour, minute):
        return False
    record = DigestDay.objects.filter(day=local.date()).first()
    if record is None:
        return True
    if record.outcome in (DigestDay.Outcome.SENT, DigestDay.Outcome.NOTHING):
        return False
    return not outbox.backing_off(record, now)


def digest_scheduled(*, now: dt.datetime | None = None) -> str | None:
    """The worker's step: send the digest when it is due; the outcome, or None when not due."""
    if not digest_due(now):
        return None
    return digest_send(now=now)[0]

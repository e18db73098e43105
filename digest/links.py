"""The digest's one-click links: signed, single-use, expiring, and never a decision by themselves.

A token is ``django.core.signing`` over the link's row id and a random nonce (salted, with a
timestamp checked against ``TWIN_DIGEST_LINK_TTL``); the row keeps the nonce's hash, the
decision, the expiry and when and by whom it was used. Following a link (GET) only shows the
request; the decision is the confirmation page's POST by a logged-in owner, and goes through
``chat.turns.decisions.approval_decide`` like every other console. Both GET and POST check the
token; the POST checks it again under the row's lock, so of two confirmations one wins.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from approvals.models import PendingApproval
from chat.turns.decisions import approval_decide
from digest.models import DigestLink

SALT = "twinsite.digest.link"


class LinkError(Exception):
    """Why a link cannot decide; ``status`` is the page's HTTP status, ``code`` its error code."""

    code = "link_invalid"
    status = 400

    def __init__(self, message: str, link: DigestLink | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.link = link


class LinkInvalid(LinkError):
    code, status = "link_invalid", 400


class LinkExpired(LinkError):
    code, status = "link_expired", 410


class LinkUsed(LinkError):
    code, status = "link_used", 410


class LinkDecided(LinkError):
    """The request was decided elsewhere (the admin, another link, the expiry)."""

    code, status = "already_decided", 409


def _hash(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


def link_create(*, approval: PendingApproval, decision: str, now: dt.datetime | None = None,
                nonce: str | None = None) -> str:
    """A new link for ``decision`` on ``approval``; returns its absolute address. ``nonce``: one
    the caller can derive again (``link_address``), for a message that may be sent twice."""
    now = now or timezone.now()
    nonce = nonce or secrets.token_urlsafe(16)
    link = DigestLink.objects.create(approval=approval, decision=decision, nonce_sha256=_hash(nonce),
                                     expires_at=now + dt.timedelta(seconds=settings.TWIN_DIGEST_LINK_TTL))
    return _address(link.pk, nonce)


def links_forget(nonces: list[str]) -> int:
    """Delete the links made with these nonces (a mail that did not go takes its links along)."""
    return DigestLink.objects.filter(nonce_sha256__in=[_hash(n) for n in nonces]).delete()[0]


def link_address(nonce: str, *, renew: dt.datetime | None = None) -> str | None:
    """The address of the link made with ``nonce`` (a fresh signature over the same row and
    nonce: it works like the first), or None when there is no such link. ``renew``: an unused
    link then works for ``TWIN_DIGEST_LINK_TTL`` from that moment, if that is later."""
    link = DigestLink.objects.filter(nonce_sha256=_hash(nonce)).first()
    if link is None:
        return None
    if renew is not None and link.used_at is None:
        until = renew + dt.timedelta(seconds=settings.TWIN_DIGEST_LINK_TTL)
        if link.expires_at < until:
            DigestLink.objects.filter(pk=link.pk).update(expires_at=until)
    return _address(link.pk, nonce)


def _address(pk: int, nonce: str) -> str:
    token = signing.dumps({"l": pk, "n": nonce}, salt=SALT)
    return settings.TWIN_SITE_URL + reverse("digest-confirm", args=[token])


def link_check(token: str, *, lock: bool = False) -> DigestLink:
    """The link behind ``token`` if it may still decide; raises a LinkError saying why not."""
    try:
        payload = signing.loads(token, salt=SALT, max_age=settings.TWIN_DIGEST_LINK_TTL)
    except signing.SignatureExpired:
        raise LinkExpired("this link has expired") from None
    except signing.BadSignature:
        raise LinkInvalid("this link is not valid: it was changed or cut short") from None
    if not (isinstance(payload, dict) and isinstance(payload.get("l"), int) and isinstance(payload.get("n"), str)):
        raise LinkInvalid("this link is not valid")
    query = DigestLink.objects.select_related("approval")
    if lock:
        query = query.select_for_update(of=("self",))
    link = query.filter(pk=payload["l"]).first()
    # a row of another link (ids reused after a restore) does not match the nonce
    if link is None or not secrets.compare_digest(link.nonce_sha256, _hash(payload["n"])):
        raise LinkInvalid("this link is not valid (or its request was deleted)")
    if link.used_at is not None:
        raise LinkUsed(f"this link was already used by {link.used_by}", link)
    if link.expires_at <= timezone.now():
        raise LinkExpired("this link has expired", link)
    if link.approval.status != PendingApproval.Status.PENDING:
        raise LinkDecided(f"this request was already {link.approval.status}", link)
    return link


@transaction.atomic
def link_decide(*, token: str, actor: str, reason: str = "") -> PendingApproval:
    """The confirmation page's POST: re-check the link under its row lock, decide through the
    approvals service (which enqueues the thread's resume after commit) and use the link up.
    A failed decision (a rejection without a reason) leaves the link unused."""
    link = link_check(token, lock=True)
    approval = approval_decide(approval_id=link.approval_id, decision=link.decision, actor=actor, reason=reason)
    link.used_at = timezone.now()
    link.used_by = actor[:150]
    link.save(update_fields=["used_at", "used_by"])
    return approval

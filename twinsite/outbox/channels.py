"""How a notice reaches the owner: an e-mail (plain text and HTML, in ``TWIN_OWNER_LANGUAGE``)
and a webhook POST in one of three shapes (``TWIN_NOTIFY_FORMAT``):

- ``json``: Twinsite's own document (docs/NOTIFICATIONS.md), for a receiver of your own;
- ``ntfy``: ntfy's JSON publishing (``TWIN_NOTIFY_WEBHOOK`` is the topic's address, such as
  ``https://ntfy.sh/my-topic``; the JSON goes to the server's root with the topic in it);
- ``slack``: a Slack incoming webhook's ``text`` and ``blocks``.

The POST itself, its signature (Standard Webhooks), its deadline and what counts as a failure
are the outbox's: ``twinsite.outbox.webhooks``. Anything but a 2xx answer is a failure that
``twinsite.outbox.notices`` retries.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from digest.selectors import excerpt
from twinsite import outbox
from twinsite.outbox import webhooks

MESSAGE_CHARS = 1500  # of a visitor's message in a push notice; the e-mail and the admin have it whole
SLACK_SECTION_CHARS = 2900  # Slack refuses a section text over 3,000 characters
NTFY_MESSAGE_BYTES = 3800  # ntfy turns a message over 4,096 bytes into an attachment


def send(channel: str, content: dict) -> None:
    """Send ``content`` (``twinsite.outbox.notices.notice_content``) through ``channel``; raises on failure."""
    with translation.override(settings.TWIN_OWNER_LANGUAGE):
        if channel == "email":
            email_message(content).send(fail_silently=False)
        else:
            webhook_post(content)


# --- e-mail ------------------------------------------------------------------------------------

def email_subject(content: dict) -> str:
    requests = content["requests"]
    if content["kind"] == "test":
        return _("Test notice from your digital twin")
    if len(requests) == 1 and not content["more"]:
        name = excerpt(requests[0]["visitor_name"], 60) or _("A visitor")
        return _("%(name)s asks to reach you through your digital twin") % {"name": name}
    total = len(requests) + content["more"]
    return ngettext("%(n)d contact request waits for you", "%(n)d contact requests wait for you", total) % {"n": total}


def email_message(content: dict) -> EmailMultiAlternatives:
    context = {**content, "language": translation.get_language()}
    text = render_to_string("digest/notice.txt", context)
    message = EmailMultiAlternatives(
        subject=email_subject(content), body="\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n",
        to=[settings.TWIN_OWNER_EMAIL],
        headers={"Message-ID": outbox.message_id(f"notice-{content['id']}"), "Auto-Submitted": "auto-generated",
                 "X-Twinsite-Notice": content["id"]})
    message.attach_alternative(render_to_string("digest/notice.html", context), "text/html")
    return message


# --- webhooks ----------------------------------------------------------------------------------

def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(text: str) -> str:
    return _cut(str(text or "").strip(), MESSAGE_CHARS)


def json_document(content: dict) -> dict:
    keys = ("id", "visitor_name", "visitor_email", "message", "admin_url", "approve_url", "reject_url")
    return {
        "id": content["id"], "type": "test" if content["kind"] == "test" else "contact_requests",
        "created_at": content["created_at"].isoformat(), "owner": content["owner"], "title": email_subject(content),
        "admin_url": content["admin_url"], "more": content["more"],
        "requests": [{**{k: r[k] for k in keys}, "created_at": r["created_at"].isoformat(),
                      "expires_at": r["expires_at"].isoformat()} for r in content["requests"]],
    }


def _plain_lines(content: dict) -> list[str]:
    if content["kind"] == "test":
        return [_("Notices of contact requests reach you here.")]
    lines = []
    for r in content["requests"]:
        who = r["visitor_name"] or _("A visitor")
        lines.append(f"{who} <{r['visitor_email'] or '-'}>: {_short(r['message'])}")
    if content["more"]:
        lines.append(ngettext("and %(n)d more in the admin", "and %(n)d more in the admin",
                              content["more"]) % {"n": content["more"]})
    return lines


def ntfy_document(content: dict, topic: str) -> dict:
    """ntfy's JSON publishing: at most three buttons, so one request gets Approve and Reject,
    several get the admin; a tap on the notice opens the admin's list of waiting requests."""
    requests = content["requests"]
    actions = [{"action": "view", "label": _("Open the admin"), "url": content["admin_url"]}]
    if len(requests) == 1 and not content["more"]:
        actions = [{"action": "view", "label": _("Approve"), "url": requests[0]["approve_url"], "clear": True},
                   {"action": "view", "label": _("Reject"), "url": requests[0]["reject_url"], "clear": True},
                   *actions]
    message = "\n\n".join(_plain_lines(content)).encode()
    if len(message) > NTFY_MESSAGE_BYTES:
        message = message[: NTFY_MESSAGE_BYTES - 3] + "…".encode()
    return {"topic": topic, "title": email_subject(content), "message": message.decode(errors="ignore"),
            "tags": ["envelope"], "priority": 4, "click": content["admin_url"], "actions": actions}


def _slack_escape(text: str) -> str:
    """Slack's three control characters: a visitor's ``<!channel>`` or ``<url|label>`` stays text."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_document(content: dict) -> dict:
    title = email_subject(content)
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": excerpt(title, 150)}}]
    if content["kind"] == "test":
        blocks.append({"type": "section", "text": {"type": "plain_text", "text": _plain_lines(content)[0]}})
    for r in content["requests"]:
        who = _slack_escape(excerpt(r["visitor_name"] or _("A visitor"), 200))
        email = _slack_escape(excerpt(r["visitor_email"] or "-", 300))
        quoted = "\n".join("> " + line for line in _slack_escape(r["message"]).splitlines() or [""])
        text = _cut(f"*{who}* ({email})\n{quoted}", SLACK_SECTION_CHARS)
        # verbatim: Slack leaves a visitor's "@channel" and addresses as they are written
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text, "verbatim": True}})
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": _("Approve")}, "style": "primary",
             "url": r["approve_url"]},
            {"type": "button", "text": {"type": "plain_text", "text": _("Reject")}, "style": "danger",
             "url": r["reject_url"]},
            {"type": "button", "text": {"type": "plain_text", "text": _("Edit first, in the admin")},
             "url": r["admin_url"]}]})
    footer = _("Open the admin")
    if content["more"]:
        footer = _plain_lines(content)[-1]
    blocks.append({"type": "context", "elements": [
        {"type": "mrkdwn", "text": f"<{content['admin_url']}|{_slack_escape(footer)}>"}]})
    return {"text": _slack_escape(title), "blocks": blocks}


def webhook_request(content: dict) -> tuple[str, bytes, dict[str, str]]:
    """(address, raw body, headers) of the POST for ``TWIN_NOTIFY_FORMAT``."""
    url, shape = settings.TWIN_NOTIFY_WEBHOOK, settings.TWIN_NOTIFY_FORMAT
    if shape == "ntfy":
        parts = urlsplit(url)
        base, _slash, topic = parts.path.rstrip("/").rpartition("/")
        # the server's root, keeping a query such as ?auth=... (ntfy's access token in the address)
        url = urlunsplit((parts.scheme, parts.netloc, base + "/", parts.query, ""))
        document = ntfy_document(content, topic)
    elif shape == "slack":
        document = slack_document(content)
    else:
        document = json_document(content)
    body = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": "Twinsite",
               **webhooks.signed_headers(content["id"], body),
               "X-Twinsite-Event": "test" if content["kind"] == "test" else "contact_requests"}
    return url, body, headers


def webhook_post(content: dict) -> int:
    """POST the notice (``twinsite.outbox.webhooks.post``): the receiver's 2xx status code, else it raises."""
    return webhooks.post(*webhook_request(content))

"""Getting started: what a new owner has left to set up, on the admin's index until it is done.

Each step says its state and where to do it (an admin page, or the command or variable to set):
the owner's name, the content, the model, the twin on the owner's site, notices, and whether the
admin password is still the generated one ``make run`` printed. Shown to superusers (the owner's
account) while any step is left."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from approvals.models import GeneratedPassword
from digest.models import NoticeDelivery, OwnerNotice
from knowledge.models import Document
from ops.models import Job, ProviderCheck
from twinsite.outbox.notices import configured_channels

SAMPLE_DIR = Path(settings.BASE_DIR) / "knowledge" / "content"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@dataclass
class Step:
    key: str
    title: str
    done: bool
    state: str
    url: str = ""  # the admin page that does it
    link: str = ""  # that link's words
    command: str = ""  # or what to type / set
    details: list[str] = field(default_factory=list)
    snippet: str = ""


def _when(moment) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


def _is_sample() -> bool:
    return Path(settings.TWIN_KNOWLEDGE_DIR).resolve() == SAMPLE_DIR.resolve()


def owner_step() -> Step:
    name = settings.TWIN_OWNER_NAME
    if _is_sample():
        return Step("owner", _("Your name"), False,
                    _("The twin still speaks for the sample owner, %(name)s: import your own content (below). "
                      "The name on your CV goes into owner.yaml in your knowledge folder.") % {"name": name},
                    command="TWIN_KNOWLEDGE_DIR=my-knowledge make run")
    if name == "the owner":
        return Step("owner", _("Your name"), False,
                    _("No name: the twin calls you “the owner”. Write your name in owner.yaml in the knowledge "
                      "folder, or set TWIN_OWNER_NAME."),
                    command=f"name: Your Name      # {Path(settings.TWIN_KNOWLEDGE_DIR) / 'owner.yaml'}")
    return Step("owner", _("Your name"), True, _("The twin speaks for %(name)s.") % {"name": name})


def content_step(user) -> Step:
    documents = Document.objects.count()
    state = ngettext("%(n)s document in the knowledge base.", "%(n)s documents in the knowledge base.",
                     documents) % {"n": documents}
    details = []
    last = Job.objects.filter(kind=Job.Kind.KNOWLEDGE_IMPORT).order_by("-created_at").first()
    failed = False
    if last is None:
        details.append(_("No import from the admin yet."))
    else:
        details.append(_("Last import: %(when)s, %(status)s.") % {"when": _when(last.created_at),
                                                                    "status": last.get_status_display()})
        if last.error:
            failed = True
            details.append(_("Its error: %(error)s") % {"error": last.error[:300]})
    sample = _is_sample()
    if sample:
        state += " " + _("They are the sample owner's.")
    url = link = ""
    if user.has_perm("knowledge.add_document"):
        url, link = reverse("admin:knowledge_import"), _("Import a CV or a site")
    elif user.has_perm("knowledge.view_document"):
        url, link = reverse("admin:knowledge_document_changelist"), _("Documents")
    return Step("content", _("Your content"), documents > 0 and not sample and not failed, state, url=url,
                link=link, details=details,
                command=".venv/bin/python manage.py import_knowledge Profile.pdf https://your-site.example/ "
                        "--into my-knowledge")


def model_step() -> Step:
    provider = settings.TWIN_PROVIDER
    if provider == "offline":
        return Step("model", _("The model"), False,
                    _("Offline mode: answers quote your documents. To connect a model, set TWIN_PROVIDER and its "
                      "key, and check it with manage.py check_provider."),
                    command="TWIN_PROVIDER=openai TWIN_API_KEY=sk-your-key make run")
    check = ProviderCheck.objects.filter(provider=provider).order_by("-checked_at").first()
    if check is None:
        return Step("model", _("The model"), False,
                    _("%(provider)s, never checked.") % {"provider": provider},
                    command=".venv/bin/python manage.py check_provider")
    named = {"provider": provider, "model": check.model, "when": _when(check.checked_at)}
    fixes = list((check.result.get("fixes") or {}).values())[:3]
    if check.ok:
        return Step("model", _("The model"), True,
                    _("%(provider)s %(model)s: the last check passed (%(when)s).") % named)
    return Step("model", _("The model"), False,
                _("%(provider)s %(model)s: the last check failed (%(when)s).") % named,
                details=[*fixes, *(check.result.get("errors") or [])[:2]],
                command=".venv/bin/python manage.py check_provider")


def embed_step() -> Step:
    origins = settings.TWIN_EMBED_ORIGINS
    site = settings.TWIN_SITE_URL.rstrip("/")
    snippet = (f'<script src="{site}/embed.js" data-lang="{settings.TWIN_OWNER_LANGUAGE}" async></script>')
    details = []
    local = (urlsplit(site).hostname or "") in LOOPBACK
    if local:
        details.append(_("TWIN_SITE_URL is this machine's own address (%(site)s): set it to the twin's public "
                         "address.") % {"site": site})
    if origins:
        state = _("Allowed on %(origins)s. Paste this into a page there:") % {"origins": ", ".join(origins)}
    else:
        state = _("No site may show the twin yet. Allow yours with TWIN_EMBED_ORIGINS, then paste this into its "
                  "pages:")
    return Step("embed", _("The twin on your site"), bool(origins) and not local, state, snippet=snippet,
                details=details, command=f"TWIN_EMBED_ORIGINS={','.join(origins) or 'https://your-site.example'}")


def _delivery_line(delivery: NoticeDelivery) -> str:
    named = {"channel": delivery.get_channel_display(), "target": delivery.target}
    if delivery.status == NoticeDelivery.Status.SENT:
        return _("%(channel)s to %(target)s: arrived.") % named
    if delivery.status == NoticeDelivery.Status.FAILED:
        return _("%(channel)s to %(target)s: failed: %(error)s") % {**named, "error": delivery.last_error[:200]}
    return _("%(channel)s to %(target)s: not sent yet.") % named


def notices_step(user) -> Step:
    channels = configured_channels()
    last = (OwnerNotice.objects.filter(kind=OwnerNotice.Kind.TEST).prefetch_related("deliveries")
            .order_by("-created_at").first())
    details = []
    if not channels:
        state = _("No way to reach you: set TWIN_OWNER_EMAIL or TWIN_NOTIFY_WEBHOOK.")
    elif last is None:
        state = _("Never tested: send a test and see that it reaches you.")
    else:
        state = _("Last test: %(when)s.") % {"when": _when(last.created_at)}
        details = [_delivery_line(d) for d in last.deliveries.all()]
    if NoticeDelivery.Channel.EMAIL in channels and settings.TWIN_OWNER_EMAIL.endswith("@localhost"):
        details.append(_("E-mail goes to %(address)s: set TWIN_OWNER_EMAIL to your address.")
                       % {"address": settings.TWIN_OWNER_EMAIL})
    arrived = last is not None and {d.channel for d in last.deliveries.all()
                                    if d.status == NoticeDelivery.Status.SENT} >= set(channels)
    done = bool(channels) and arrived and not settings.TWIN_OWNER_EMAIL.endswith("@localhost")
    can_test = bool(channels) and user.has_perm("digest.view_noticedelivery")
    return Step("notices", _("Being told at once"), done, state, details=details,
                url=reverse("admin:digest_notice_test") if can_test else "", link=_("Send a test"),
                command="TWIN_NOTIFY_WEBHOOK=https://ntfy.sh/your-own-topic TWIN_OWNER_EMAIL=you@example.com")


def password_step() -> Step:
    mark = (GeneratedPassword.objects.select_related("user")
            .filter(user__username=settings.TWIN_ADMIN_USER).first())
    if mark is not None and mark.still_in_use:
        return Step("password", _("The admin password"), False,
                    _("Still the generated one printed at the first start: choose your own."),
                    url=reverse("admin:password_change"), link=_("Change the password"))
    return Step("password", _("The admin password"), True, _("Your own."))


def getting_started(user) -> dict | None:
    """The checklist for ``user``; None when it is not theirs to see or nothing is left."""
    if not user.is_superuser:
        return None
    steps = [owner_step(), content_step(user), model_step(), embed_step(), notices_step(user), password_step()]
    left = sum(not step.done for step in steps)
    if not left:
        return None
    return {"steps": steps, "left": left, "total": len(steps)}

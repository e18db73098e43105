"""The confirmation page behind a digest's approve/reject link.

Following the link decides nothing: a logged-out browser (or a mail scanner) is sent to the
admin's login; a logged-in owner with ``approvals.decide`` sees the request and confirms with a
POST (CSRF-protected). The token is checked on both, and again under its row's lock when the
decision is made through ``chat.turns.decisions.approval_decide`` — as the admin does, attributed
to the logged-in user.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from approvals.errors import AlreadyDecided, ApprovalError, InvalidDecision
from chat.selectors import approval_transcript
from digest.links import LinkDecided, LinkError, link_check, link_decide
from digest.selectors import argument_order


def _status_label(status: str) -> str:
    return {"approved": _("approved"), "rejected": _("rejected"), "expired": _("expired")}.get(status, status)


def _page(request: HttpRequest, status: int = 200, **context) -> HttpResponse:
    approval = context.get("approval") or getattr(context.get("error_link"), "approval", None)
    admin_url = (reverse("admin:approvals_pendingapproval_change", args=[approval.pk]) if approval
                 else reverse("admin:approvals_pendingapproval_changelist"))
    response = render(request, "digest/confirm.html", {
        **admin.site.each_context(request), "title": _("Your twin's digest"), "admin_url": admin_url, **context,
    }, status=status)
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _error(request: HttpRequest, exc: LinkError | ApprovalError) -> HttpResponse:
    link = getattr(exc, "link", None)
    approval = getattr(exc, "approval", None) or getattr(link, "approval", None)
    code = "already_decided" if isinstance(exc, AlreadyDecided) else exc.code
    return _page(request, status=getattr(exc, "status", LinkDecided.status), state="error", error_code=code,
                 error_link=link, error_approval=approval,
                 error_status=_status_label(approval.status) if approval else "")


@never_cache
@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    user = request.user
    if not (user.is_authenticated and user.is_active and user.is_staff):
        # nothing is looked at, let alone decided, for a browser that is not logged in
        return redirect_to_login(request.get_full_path(), login_url=reverse("admin:login"))
    with translation.override(settings.TWIN_OWNER_LANGUAGE):
        if not user.has_perm("approvals.decide"):
            return _page(request, status=403, state="error", error_code="forbidden")
        try:
            link = link_check(token)
        except LinkError as exc:
            return _error(request, exc)
        form_error = ""
        if request.method == "POST":
            try:
                approval = link_decide(token=token, actor=user.get_username(),
                                       reason=request.POST.get("reason", "")[:500])
            except LinkError as exc:
                return _error(request, exc)
            except InvalidDecision:
                form_error = _("A rejection needs a reason.")
            except ApprovalError as exc:  # decided elsewhere in the meantime
                return _error(request, exc)
            else:
                return _page(request, state="done", approval=approval)
        approval = link.approval
        arguments = [(name.removeprefix("visitor_"), approval.arguments[name], approval.argument_origins.get(name, ""))
                     for name in argument_order(approval.arguments)]
        return _page(request, status=400 if form_error else 200, state="confirm", link=link, approval=approval,
                     arguments=arguments, transcript=approval_transcript(approval), form_error=form_error)

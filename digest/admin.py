"""The digest's and the notices' record in the admin: which days went out, the links they
carried, and every notice of waiting requests with each channel's attempts and last error
(read-only)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _

from digest.models import DigestDay, DigestLink, NoticeDelivery, OwnerNotice
from twinsite.admin_base import ReadOnlyAdmin, ReadOnlyInline
from twinsite.outbox.notices import notice_test


@admin.register(DigestDay)
class DigestDayAdmin(ReadOnlyAdmin):
    list_display = ("day", "outcome", "sent_at", "counts", "attempts", "last_error")
    list_filter = ("outcome",)


@admin.register(DigestLink)
class DigestLinkAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "approval", "decision", "expires_at", "used_at", "used_by")
    list_filter = ("decision",)
    list_select_related = ("approval",)
    exclude = ("nonce_sha256",)


class NoticeDeliveryInline(ReadOnlyInline):
    model = NoticeDelivery
    fields = ("channel", "target", "status", "attempts", "sent_at", "next_attempt_at", "last_error")


@admin.register(OwnerNotice)
class OwnerNoticeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "kind", "requests", "deliveries_summary")
    list_filter = ("kind", "deliveries__status")
    fields = ("id", "kind", "created_at", "requests")
    readonly_fields = fields
    inlines = [NoticeDeliveryInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("deliveries", "items")

    @admin.display(description="requests")
    def requests(self, obj: OwnerNotice):
        return format_html_join(", ", '<a href="{}">#{}</a>', (
            (reverse("admin:approvals_pendingapproval_change", args=[i.approval_id]), i.approval_id)
            for i in obj.items.all())) or "-"

    @admin.display(description="channels")
    def deliveries_summary(self, obj: OwnerNotice):
        return format_html_join(" · ", "<span title='{}'>{}: {}</span>", (
            (d.last_error, d.get_channel_display(), d.get_status_display()) for d in obj.deliveries.all()))


@admin.register(NoticeDelivery)
class NoticeDeliveryAdmin(ReadOnlyAdmin):
    """Every attempt to tell the owner, by channel: the failures and their last error on top."""

    list_display = ("notice_created", "channel", "target", "status", "attempts", "sent_at", "next_attempt_at",
                    "error")
    list_filter = ("status", "channel", "notice__kind")
    list_select_related = ("notice",)

    @admin.display(description="notice", ordering="notice__created_at")
    def notice_created(self, obj: NoticeDelivery):
        return format_html('<a href="{}">{}</a>', reverse("admin:digest_ownernotice_change", args=[obj.notice_id]),
                           timezone.localtime(obj.notice.created_at).strftime("%Y-%m-%d %H:%M"))

    @admin.display(description="last error")
    def error(self, obj: NoticeDelivery) -> str:
        return obj.last_error[:200] or "-"


    def get_urls(self):
        return [path("test/", self.admin_site.admin_view(self.send_test_view), name="digest_notice_test"),
                *super().get_urls()]

    def send_test_view(self, request: HttpRequest) -> HttpResponse:
        """Getting started's "Send a test": a test notice through every configured channel, as
        ``manage.py notify_owner --test`` sends it; a POST (the admin's CSRF check), staff who may
        see the notices only."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_view_permission(request):
            raise PermissionDenied
        results = notice_test()
        if results and all(d.status == NoticeDelivery.Status.SENT for d, _outcome in results):
            messages.success(request, _("The test notice went out through every channel: check that it reached you."))
        elif results:
            messages.error(request, _("The test notice did not get through every channel: see Getting started."))
        else:
            messages.error(request, _("No channel is configured: set TWIN_OWNER_EMAIL or TWIN_NOTIFY_WEBHOOK."))
        return HttpResponseRedirect(reverse("admin:index") + "#getting-started")

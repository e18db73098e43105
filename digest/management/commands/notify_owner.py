"""Tell the owner now of the contact requests that wait, as the worker does every few seconds."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from twinsite.outbox.notices import configured_channels, notice_test, notices_run


def _line(delivery, outcome: str) -> str:
    notice = delivery.notice
    requests = ", ".join(f"#{pk}" for pk in notice.items.order_by("approval_id").values_list("approval_id", flat=True))
    text = f"{outcome}: notice {notice.pk} by {delivery.get_channel_display()} to {delivery.target}"
    text += f" ({requests})" if requests else ""
    return text + (f": {delivery.last_error}" if outcome == "failed" else "")


class Command(BaseCommand):
    help = ("Send the due notices of waiting contact requests now, as the worker does (bundling and quiet hours "
            "included), and print what was sent; --test sends a test notice through every configured channel.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--test", action="store_true",
                            help="send a test notice through every configured channel, now")

    def handle(self, *args, test: bool = False, **options) -> None:
        if not configured_channels():
            raise CommandError("no channel is configured: set TWIN_NOTIFY_EMAIL=1 (to TWIN_OWNER_EMAIL) "
                               "or TWIN_NOTIFY_WEBHOOK")
        if test:
            results = notice_test()
            for delivery, outcome in results:
                self.stdout.write(_line(delivery, outcome))
            if any(outcome != "sent" for _, outcome in results):
                raise CommandError("the test notice did not get through every channel (see above)")
            return
        report = notices_run()
        if report.quiet_until is not None:
            until = timezone.localtime(report.quiet_until).strftime("%H:%M")
            self.stdout.write(f"Quiet hours (TWIN_NOTIFY_QUIET) until {until}: nothing sent.")
            return
        for delivery, outcome in report.sent:
            self.stdout.write(_line(delivery, outcome))
        if report.held_until is not None:
            until = timezone.localtime(report.held_until).strftime("%H:%M")
            self.stdout.write(f"Newer requests wait for the next notice at {until} (TWIN_NOTIFY_EVERY).")
        if not report.did_anything and report.held_until is None:
            self.stdout.write("Nothing to send: no request waits that the owner was not told of.")
        if any(outcome == "failed" for _, outcome in report.sent):
            raise CommandError("a notice could not be sent (recorded; the worker retries it)")

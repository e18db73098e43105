"""The owner's notice and digest end to end: the worker tells the owner of a waiting request at
once and sends the digest on its schedule (to files, EMAIL_BACKEND=file), a logged-out browser
that follows the digest's approve link lands on the login and decides nothing, the owner logs
in, confirms, and the visitor's open chat gets the approval's outcome (the resume)."""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from email import policy
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

from approvals.models import ContactMessage, PendingApproval
from digest.models import DigestDay, DigestLink
from tests.digest.seed import seed_day
from tests.e2e.test_chat_page import ROOT, ask, launch, needs_browser, server, shot, visitor_page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)
TOM = "Can I send her a message? I'm Tom, tom@example.com. I'd like to talk about a data platform project."


def db(read):
    """Run an ORM read from inside Playwright's block (its event loop forbids the ORM in this thread)."""
    def run():
        try:
            return read()
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def start_worker(tmp_path: Path, **extra: str) -> subprocess.Popen:
    sd = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
               f"{sd['NAME']}", TWIN_PROVIDER="offline", DJANGO_SETTINGS_MODULE="twinsite.settings",
               TWIN_WORKER_SWEEP_SECONDS="2", **extra)
    log = (tmp_path / "worker.log").open("w")
    return subprocess.Popen([sys.executable, "manage.py", "twin_worker", "--interval", "0.2"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)


def mail_titled(folder: Path, subject: str, worker: subprocess.Popen, log: Path,
                timeout: float = 90) -> email.message.EmailMessage:
    """The message with ``subject`` the file backend wrote (each send is a file of messages split
    by dashes), waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sorted(folder.glob("*.log")) if folder.exists() else []:
            if (raw := path.read_bytes()).rstrip().endswith(b"-" * 79):
                message = email.message_from_bytes(raw.split(b"\n" + b"-" * 79)[0], policy=policy.default)
                if message["Subject"] == subject:
                    return message
        assert worker.poll() is None, log.read_text()
        time.sleep(0.3)
    raise AssertionError(f"no mail {subject!r} within {timeout}s:\n{log.read_text()}")


@needs_browser
def test_the_worker_mails_the_digest_and_its_link_decides_only_after_login_and_confirmation(server, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    User.objects.create_superuser("owner", password="owner-pass-123")
    seed_day(approvals=False)  # the rest of a day: questions, incidents, feedback, flagged answers, spend
    with sync_playwright() as pw:
        browser = launch(pw)
        visitor, watch = visitor_page(browser, locale="en-GB")
        visitor.goto(server + "/")
        ask(visitor, TOM)
        visitor.locator(".approval.pending").wait_for(timeout=30_000)
        approval_id = db(lambda: PendingApproval.objects.get().pk)

        def state() -> tuple[str, int]:
            return db(lambda: (PendingApproval.objects.get(pk=approval_id).status,
                               DigestLink.objects.filter(used_at__isnull=False).count()))

        # the worker, started after the request, tells the owner of it at once (twinsite.outbox.notices),
        # and finds the digest due (00:00) and sends it
        mail_dir = tmp_path / "mail"
        worker = start_worker(tmp_path, TWIN_DIGEST_TIME="00:00", EMAIL_BACKEND="file",
                              EMAIL_FILE_PATH=str(mail_dir), TWIN_SITE_URL=server, TWIN_NOTIFY_QUIET="off")
        try:
            notice = mail_titled(mail_dir, "Tom asks to reach you through your digital twin", worker,
                                 tmp_path / "worker.log")
            notice_text = notice.get_body(("plain",)).get_content()
            assert "tom@example.com" in notice_text and "data platform project" in notice_text
            assert re.search(r"Approve: (\S+)", notice_text)[1].startswith(f"{server}/digest/")
            rendered = browser.new_page(viewport={"width": 760, "height": 300})  # full_page: as tall as it is
            rendered.set_content(notice.get_body(("html",)).get_content())
            rendered.screenshot(path=str(shot_path("notice")), full_page=True)

            message = mail_titled(mail_dir, "Your twin's digest: 1 contact request waits for you", worker,
                                  tmp_path / "worker.log")
            text = message.get_body(("plain",)).get_content()
            html = message.get_body(("html",)).get_content()
            approve = re.search(r"Approve: (\S+)", text)[1]
            assert approve.startswith(f"{server}/digest/") and approve in html
            assert "tom@example.com" in text and "3x  What is her day rate?" in text
            assert db(lambda: DigestDay.objects.get().outcome) == "sent"

            rendered.set_content(html)
            rendered.screenshot(path=str(shot_path("digest")), full_page=True)

            # a logged-out browser (or a mail scanner) following the link: the login, nothing decided
            owner = browser.new_context(locale="en-GB").new_page()
            owner.goto(approve)
            assert "/admin/login/" in owner.url
            assert state() == ("pending", 0)

            owner.fill("#id_username", "owner")
            owner.fill("#id_password", "owner-pass-123")
            owner.click("input[type=submit]")
            page = owner.locator('#digest-link[data-state="confirm"]')
            page.wait_for()
            assert owner.url == approve  # back on the confirmation page
            assert "tom@example.com" in page.inner_text() and "typed by the visitor" in page.inner_text()
            assert state() == ("pending", 0)  # still: seeing the request is not deciding it
            shot(owner, "digest-confirm")
            owner.click("input[name=_confirm]")
            owner.locator("#digest-done").wait_for()

            visitor.locator(".approval.approved").wait_for(timeout=30_000)  # resumed by the worker, pushed
            visitor.locator(".msg.assistant.approval_resolved").wait_for(timeout=30_000)
            assert "approved your message" in visitor.locator(".msg.assistant").last.inner_text()
            assert watch.problems == []

            owner.goto(approve)  # the link is used up
            assert owner.locator('#digest-link[data-code="link_used"]').count() == 1
        finally:
            worker.terminate()
            worker.wait(timeout=20)
        browser.close()
    approval = PendingApproval.objects.get(pk=approval_id)
    assert (approval.status, approval.decided_by, approval.resume_status) == ("approved", "owner", "done")
    assert ContactMessage.objects.count() == 1


def shot_path(name: str) -> Path:
    from tests.e2e.test_chat_page import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS / f"{name}.png"

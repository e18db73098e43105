"""The digest's approve/reject links: a link alone never decides. Replayed, expired, tampered
with, or followed by a logged-out browser (a mail scanner), it changes nothing; confirmed by a
logged-in owner, it decides through the same service as the admin, and the thread resumes the
same way."""

from __future__ import annotations

import time
from urllib.parse import quote, urlsplit

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from approvals.models import ContactMessage, PendingApproval
from digest.links import link_create
from digest.models import DigestLink
from tests.digest.seed import request

pytestmark = pytest.mark.django_db


def links(approval: PendingApproval) -> tuple[str, str]:
    """The approve and reject links' paths, as the digest would carry them."""
    return tuple(urlsplit(link_create(approval=approval, decision=d)).path for d in ("approve", "reject"))


def owner(username: str = "mira") -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser(username, password="pw-123456789"))
    return client


def unchanged(approval: PendingApproval) -> bool:
    approval.refresh_from_db()
    return approval.status == "pending" and approval.decided_by == "" and not DigestLink.objects.filter(
        used_at__isnull=False).exists()


@pytest.fixture
def approval(db):
    return request()


def test_a_logged_out_browser_is_sent_to_the_login_and_decides_nothing(approval):
    approve, _ = links(approval)
    browser = Client()
    response = browser.get(approve)
    assert response.status_code == 302
    assert response["Location"] == f"/admin/login/?next={quote(approve)}"
    assert browser.post(approve).status_code == 302  # a scanner that posts gets the same
    login = browser.get(response["Location"])
    assert login.status_code == 200 and b'name="next"' in login.content
    assert unchanged(approval)


def test_staff_without_the_decide_permission_cannot_use_it(approval):
    approve, _ = links(approval)
    viewer = User.objects.create_user("viewer", password="pw-123456789", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_pendingapproval"))
    client = Client()
    client.force_login(viewer)
    for response in (client.get(approve), client.post(approve)):
        assert response.status_code == 403 and b'data-code="forbidden"' in response.content
    assert unchanged(approval)


def test_following_the_link_shows_the_request_and_decides_nothing(approval):
    approve, _ = links(approval)
    client = owner()
    page = client.get(approve)
    assert page.status_code == 200 and page["Cache-Control"].startswith("max-age=0")
    body = page.content.decode()
    assert 'data-state="confirm"' in body and "<strong>approve</strong>" in body
    assert "tom@example.com" in body and "typed by the visitor" in body  # the arguments and their origins
    assert "data platform project" in body and "I&#x27;ve drafted your message" in body  # the conversation
    assert 'name="csrfmiddlewaretoken"' in body and 'method="post"' in body
    assert client.get(approve).status_code == 200  # looking again is fine
    assert unchanged(approval)


def test_a_post_without_the_csrf_token_decides_nothing(approval):
    approve, _ = links(approval)
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.create_superuser("mira", password="pw-123456789"))
    assert client.post(approve).status_code == 403
    assert unchanged(approval)


def test_confirming_decides_once_and_a_replay_changes_nothing(approval, django_capture_on_commit_callbacks):
    approve, reject = links(approval)
    client = owner()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        done = client.post(approve)
    assert done.status_code == 200 and b'data-state="done"' in done.content
    assert len(callbacks) == 1  # the thread's resume, enqueued after commit as the admin's decision does
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.resume_status) == ("approved", "mira", "queued")
    used = DigestLink.objects.get(decision="approve")
    assert used.used_by == "mira" and used.used_at is not None

    for replay in (client.post(approve), client.get(approve), owner("other").post(approve)):
        assert replay.status_code == 410 and b'data-code="link_used"' in replay.content
    sibling = client.post(reject, {"reason": "changed my mind"})
    assert sibling.status_code == 409 and b'data-code="already_decided"' in sibling.content
    approval.refresh_from_db()
    assert (approval.status, approval.decided_by, approval.reason) == ("approved", "mira", "")


def test_a_tampered_link_decides_nothing(approval):
    approve, _ = links(approval)
    other = request("I'm Eve, eve@example.com, please pass it on.", name="Eve", email="eve@example.com")
    other_approve, _ = links(other)
    token = approve.split("/")[2]
    payload, stamp, signature = token.split(":")
    other_payload = other_approve.split("/")[2].split(":")[0]
    client = owner()
    for forged in (f"{payload}:{stamp}:{signature[:-1]}{'A' if signature[-1] != 'A' else 'B'}",
                   f"{other_payload}:{stamp}:{signature}", f"{payload}:{stamp}", "nonsense", token[:-4]):
        for response in (client.get(f"/digest/{forged}/"), client.post(f"/digest/{forged}/")):
            assert response.status_code == 400, forged
            assert b'data-code="link_invalid"' in response.content
    assert unchanged(approval) and unchanged(other)


def test_an_expired_link_decides_nothing(approval, settings):
    approve, reject = links(approval)
    client = owner()
    DigestLink.objects.filter(decision="approve").update(expires_at=timezone.now())
    for response in (client.get(approve), client.post(approve)):
        assert response.status_code == 410 and b'data-code="link_expired"' in response.content
    settings.TWIN_DIGEST_LINK_TTL = 1  # the signature's own timestamp, checked with max_age
    time.sleep(1.1)
    assert client.post(reject, {"reason": "no"}).status_code == 410
    assert unchanged(approval)


def test_a_rejection_needs_a_reason_and_keeps_the_link_until_it_has_one(approval):
    _, reject = links(approval)
    client = owner()
    page = client.get(reject).content.decode()
    assert "<strong>reject</strong>" in page and 'name="reason"' in page and "required" in page
    refused = client.post(reject, {"reason": "  "})
    assert refused.status_code == 400 and b"A rejection needs a reason." in refused.content
    assert unchanged(approval)
    assert client.post(reject, {"reason": "not taking new clients"}).status_code == 200
    approval.refresh_from_db()
    assert (approval.status, approval.reason, approval.decided_by) == ("rejected", "not taking new clients", "mira")


def test_a_request_decided_in_the_admin_meanwhile_is_not_decided_again(approval):
    approve, _ = links(approval)
    client = owner()
    client.post(f"/admin/approvals/pendingapproval/{approval.pk}/decide/", {"decision": "reject", "reason": "spam"})
    response = client.post(approve)
    assert response.status_code == 409 and b"already decided" in response.content
    approval.refresh_from_db()
    assert approval.status == "rejected"


def test_the_confirmation_page_is_in_the_owners_language(approval, settings):
    settings.TWIN_OWNER_LANGUAGE = "nl"
    approve, _ = links(approval)
    body = owner().get(approve, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "getypt door de bezoeker" in body and "Bevestig: goedkeuren en versturen" in body


# --- through the real graph: the link's decision resumes the thread as the admin's does ----------

TEXT = "Can I send her a message? I'm Tom, tom@example.com. I'd like to talk about a data platform project."


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("kb", "checkpoint_pool")
async def test_a_decision_through_the_link_resumes_the_thread_exactly_as_the_admin_does():
    from chat.providers.offline import OfflineProvider
    from chat.services import conversation_create
    from chat.turns.resume import approval_resume
    from chat.turns.run import turn_run

    offline = OfflineProvider(owner="Mira Jansen")

    async def ask() -> PendingApproval:
        conversation = await database_sync_to_async(conversation_create)()

        async def ignore(event: dict) -> None:
            pass

        result = await turn_run(conversation_id=conversation.pk, text=TEXT, emit=ignore, provider=offline)
        assert result.outcome == "approval_pending"
        return await database_sync_to_async(PendingApproval.objects.get)(conversation=conversation)

    by_admin, by_link = await ask(), await ask()

    @database_sync_to_async
    def decide() -> None:
        client = owner()
        assert client.post(f"/admin/approvals/pendingapproval/{by_admin.pk}/decide/",
                           {"decision": "approve"}).status_code == 302
        approve, _ = links(by_link)
        assert client.post(approve).status_code == 200

    await decide()
    outcomes = {}
    for approval in (by_admin, by_link):
        events: list[dict] = []

        async def collect(event: dict, events=events) -> None:
            events.append(event)

        outcome = await approval_resume(approval_id=approval.pk, emit=collect, provider=offline)
        outcomes[approval.pk] = (outcome, [{k: v for k, v in e.items() if k not in {"approval_id", "message_id"}}
                                           for e in events if e["type"] in {"approval", "done", "citations"}])

    assert outcomes[by_admin.pk] == outcomes[by_link.pk]
    outcome, events = outcomes[by_link.pk]
    assert outcome == "resumed" and events[0]["status"] == "approved"
    assert events[-1]["outcome"] == "approval_resolved" and "approved your message" in events[-1]["answer"]

    @database_sync_to_async
    def rows() -> list[tuple]:
        return [(a.status, a.decided_by, a.final_arguments, a.resume_status, a.contact_message.body)
                for a in PendingApproval.objects.filter(pk__in=[by_admin.pk, by_link.pk])
                .select_related("contact_message").order_by("pk")]

    admin_row, link_row = await rows()
    assert admin_row == link_row == ("approved", "mira", by_link.arguments, "done", by_link.arguments["message"])
    assert await database_sync_to_async(ContactMessage.objects.count)() == 2


def test_forgetting_a_request_takes_its_links_and_counts_requests_only(approval):
    from approvals.services import approvals_forget

    links(approval)
    assert approvals_forget(conversation_ids=[approval.conversation_id]) == 1
    assert DigestLink.objects.count() == 0

"""The three approval consoles — Django admin, terminal command, bearer-token API — and the graph
proof, each calling the same services."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from ninja.testing import TestClient

from approvals.models import PendingApproval
from chat.agent.graph import build_graph
from chat.agent.verify_graph import high_risk_violations
from chat.services import conversation_create
from twinsite.api import api

pytestmark = pytest.mark.django_db
TOKEN = "t" * 32


@pytest.fixture
def approval(db):
    from approvals.services import approval_request

    conversation = conversation_create()
    conversation.messages.create(role="user", content="I'm Tom, tom@example.com: please pass on my question")
    approval, _ = approval_request(
        conversation_id=conversation.pk, tool_call_id="call_1", tool_name="draft_contact_message",
        arguments={"visitor_name": "Tom", "visitor_email": "tom@example.com", "message": "A question <b>hi</b>"},
        visitor_texts=["I'm Tom, tom@example.com: please pass on my question"])
    return approval


def staff(*perms: str) -> Client:
    user = User.objects.create_user("staff" + "".join(perms), password="pw-123456789", is_staff=True)
    for codename in ("view_pendingapproval", *perms):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client()
    client.force_login(user)
    return client


def test_admin_lists_shows_and_counts_pending_requests(approval):
    client = staff()
    listing = client.get("/admin/approvals/pendingapproval/?status__exact=pending")
    assert listing.status_code == 200
    body = listing.content.decode()
    assert "tom@example.com" in body and "A question &lt;b&gt;hi&lt;/b&gt;" in body and "typed" in body
    detail = client.get(f"/admin/approvals/pendingapproval/{approval.pk}/change/").content.decode()
    assert "please pass on my question" in detail  # the transcript that led to the request
    assert "approvals.decide" in detail and 'name="_approve"' not in detail  # viewers cannot decide
    assert client.get("/admin/approvals/pendingapproval/not-a-number/change/").status_code == 302  # not a 500
    index = client.get("/admin/").content.decode()
    assert "1 contact request waiting for your decision" in index


def test_deciding_in_the_admin_needs_the_decide_permission(approval, django_capture_on_commit_callbacks):
    url = f"/admin/approvals/pendingapproval/{approval.pk}/decide/"
    assert staff().post(url, {"decision": "approve"}).status_code == 403
    approval.refresh_from_db()
    assert approval.status == "pending"
    decider = staff("decide")
    detail = decider.get(f"/admin/approvals/pendingapproval/{approval.pk}/change/").content.decode()
    assert 'name="_approve"' in detail and 'name="_reject"' in detail and 'name="_edit"' in detail
    # the decision forms stand outside the (read-only) change form (HTML forms cannot nest), above it:
    # who, the message and the decisions come first on the page
    change_form_start = detail.index('id="pendingapproval_form"')
    decisions = [i for i in range(len(detail)) if detail.startswith(f'action="{url}"', i)]
    assert len(decisions) == 3 and max(decisions) < change_form_start
    assert detail.index('id="decide-at-a-glance"') < change_form_start
    assert detail.index("tom@example.com") < detail.index('name="_approve"')  # who, before the buttons
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = decider.post(url, {"decision": "edit", "edit_visitor_name": "Tom",
                                      "edit_visitor_email": "tom@example.com", "edit_message": "Edited."})
    assert response.status_code == 302 and len(callbacks) == 1  # the resume is enqueued after commit
    approval.refresh_from_db()
    assert (approval.status, approval.final_arguments["message"], approval.arguments["message"]) == (
        "approved", "Edited.", "A question <b>hi</b>")
    assert approval.decided_by.startswith("staff") and approval.resume_status == "queued"
    # a second click (another tab): told, nothing changes
    second = decider.post(url, {"decision": "reject", "reason": "no"}, follow=True)
    assert "already approved" in second.content.decode()
    # no generic save: the change form has no save button and POSTing it changes nothing
    decider.post(f"/admin/approvals/pendingapproval/{approval.pk}/change/", {"status": "pending"})
    approval.refresh_from_db()
    assert approval.status == "approved"


def test_terminal_command_decides_with_clear_errors(approval, capsys):
    call_command("approvals", "list")
    assert "tom@example.com" in capsys.readouterr().out
    call_command("approvals", "show", str(approval.pk))
    assert json.loads(capsys.readouterr().out)["arguments"]["visitor_name"] == "Tom"
    with pytest.raises(CommandError, match="unknown_approval"):
        call_command("approvals", "approve", "99999")
    call_command("approvals", "edit", str(approval.pk), "--field", "message=Short and sweet")
    approval.refresh_from_db()
    assert approval.status == "approved" and approval.final_arguments["message"] == "Short and sweet"
    with pytest.raises(CommandError, match="already_decided"):
        call_command("approvals", "reject", str(approval.pk), "--reason", "too late")


def test_admin_api_needs_its_token_and_answers_404_without_one(approval, settings):
    client = TestClient(api)
    settings.TWIN_ADMIN_TOKEN = ""
    assert client.get("/admin/approvals", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 404
    settings.TWIN_ADMIN_TOKEN = TOKEN
    assert client.get("/admin/approvals").status_code == 401
    assert client.get("/admin/approvals", headers={"Authorization": "Bearer wrong"}).status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    listed = client.get("/admin/approvals", headers=auth)
    assert listed.status_code == 200 and listed.json()[0]["id"] == approval.pk

    def decide(pk: int, body: dict):  # ninja's TestClient does not set the content type; the API needs it
        return client.post(f"/admin/approvals/{pk}/decide", json=body, headers=auth, content_type="application/json")

    bad = decide(approval.pk, {"decision": "reject"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_decision"
    ok = decide(approval.pk, {"decision": "reject", "reason": "spam"})
    assert ok.status_code == 200 and ok.json()["status"] == "rejected"
    again = decide(approval.pk, {"decision": "approve"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"
    assert decide(99999, {"decision": "approve"}).status_code == 404
    assert PendingApproval.objects.get(pk=approval.pk).decided_by == "api (api)"


def test_verify_graph_passes_on_the_real_graph(capsys):
    call_command("verify_graph")
    assert "ok:" in capsys.readouterr().out
    assert high_risk_violations(build_graph()) == []


def test_verify_graph_catches_a_shortcut_edge():
    plain = build_graph()
    plain.add_edge("guard_input", "execute_tools")
    assert high_risk_violations(plain) == ["plain edge guard_input → execute_tools: every call would run unchecked"]

    routed = build_graph()
    routed.add_node("fast_path", lambda state: {})
    routed.add_conditional_edges(
        "fast_path", lambda state: "execute_tools" if state.get("pending_calls") else "generate",
        ["execute_tools", "generate"])
    [problem] = high_risk_violations(routed)
    assert "fast_path" in problem and "draft_contact_message" in problem

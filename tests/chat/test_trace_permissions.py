"""Traces, prompt snapshots, a turn's cost and model, and the retrieval tester are operational
detail: a staff account that may view the tables sees none of it without ``chat.view_trace``
(and the tester without ``knowledge.view_document``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from chat.models import AgentTrace, Conversation, Message, PromptSnapshot, TurnLog

pytestmark = pytest.mark.django_db


def _staff(client, *codenames: str) -> User:
    user = User.objects.create_user("desk", password="pw-123456789", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(User.objects.get(pk=user.pk))
    return user


@pytest.fixture
def turn():
    conversation = Conversation.objects.create()
    answer = Message.objects.create(conversation=conversation, role="assistant", content="An answer")
    turn = TurnLog.objects.create(conversation=conversation, assistant_message=answer, outcome="answered",
                                  provider="openai", model="gpt-secret-model", cost_usd="0.123456")
    snapshot = PromptSnapshot.objects.create(sha256="a" * 64, text="the system prompt")
    AgentTrace.objects.create(message=answer, turn=turn, system_prompt=snapshot)
    return turn


def test_viewing_the_tables_is_not_enough_for_traces_snapshots_or_costs(client, turn):
    _staff(client, "view_agenttrace", "view_promptsnapshot", "view_turnlog", "view_document")
    assert client.get("/admin/chat/agenttrace/").status_code == 403
    assert client.get(f"/admin/chat/agenttrace/{turn.trace.pk}/change/").status_code == 403
    assert client.get("/admin/chat/promptsnapshot/").status_code == 403
    listing = client.get("/admin/chat/turnlog/")
    assert listing.status_code == 200 and "0.123456" not in listing.content.decode()
    assert "openai" not in listing.content.decode()  # neither the column nor the filter
    detail = client.get(f"/admin/chat/turnlog/{turn.pk}/change/").content.decode()
    assert "0.123456" not in detail and "gpt-secret-model" not in detail and "answered" in detail
    assert client.get("/admin/knowledge/document/test-retrieval/?q=x").status_code == 200


def test_with_view_trace_they_are_shown(client, turn):
    _staff(client, "view_agenttrace", "view_promptsnapshot", "view_turnlog", "view_trace")
    assert client.get("/admin/chat/agenttrace/").status_code == 200
    assert client.get("/admin/chat/promptsnapshot/").status_code == 200
    listing = client.get("/admin/chat/turnlog/").content.decode()
    assert "0.123456" in listing and "openai" in listing
    assert "0.123456" in client.get(f"/admin/chat/turnlog/{turn.pk}/change/").content.decode()


def test_the_retrieval_tester_needs_the_permission_to_view_documents(client):
    _staff(client, "view_turnlog")
    assert client.get("/admin/knowledge/document/test-retrieval/?q=x").status_code == 403

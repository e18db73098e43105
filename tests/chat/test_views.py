from __future__ import annotations

import pytest
from django.conf import settings

from chat.models import Conversation, Feedback, Message

pytestmark = pytest.mark.django_db


def test_loading_the_page_writes_nothing_and_the_first_question_starts_one_conversation(client):
    first = client.get("/")
    assert first.status_code == 200 and Conversation.objects.count() == 0  # a look costs no row
    html = first.content.decode()
    assert 'data-conversation=""' in html and 'data-start="/start/"' in html and 'src="/static/chat.js"' in html
    assert "<style" not in html and "<script>" not in html  # no inline style or script
    csp = first["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert b"offline mode" in first.content
    started = client.post("/start/")
    assert started.status_code == 201
    conversation = Conversation.objects.get()
    assert started.json() == {"conversation": str(conversation.pk)}
    assert client.post("/start/").json() == {"conversation": str(conversation.pk)}  # the session keeps it
    Message.objects.create(conversation=conversation, role="user", content="Hello twin")
    second = client.get("/")
    assert f'data-conversation="{conversation.pk}"' in second.content.decode() and b"Hello twin" in second.content
    assert Conversation.objects.count() == 1
    client.post("/new/")
    client.get("/")
    assert Conversation.objects.count() == 1
    assert client.post("/start/").status_code == 201 and Conversation.objects.count() == 2


def test_page_loads_are_never_limited_new_conversations_are(settings):
    """An office behind one address, a crawler, or another site with 30 <img src="/">: the page
    always loads; only conversations that ask something count against the address."""
    from django.test import Client

    settings.TWIN_RATE_CONVERSATIONS = "3/10m"
    assert [Client().get("/").status_code for _ in range(30)] == [200] * 30
    assert Conversation.objects.count() == 0
    starts = [Client().post("/start/") for _ in range(4)]
    assert [r.status_code for r in starts] == [201, 201, 201, 429]
    refused = starts[-1].json()["error"]
    assert refused["code"] == "rate_limited" and refused["retry_after"] > 0 and starts[-1]["Retry-After"]
    assert Conversation.objects.count() == 3 and Client().get("/").status_code == 200


def test_starting_a_conversation_needs_the_csrf_token():
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.get("/")
    assert browser.post("/start/").status_code == 403
    token = browser.cookies["csrftoken"].value
    assert browser.post("/start/", HTTP_X_CSRFTOKEN=token).status_code == 201


def test_feedback_only_on_own_answers(client):
    client.post("/start/")
    client.cookies["csrftoken"] = "a" * 32
    client.defaults["HTTP_X_CSRFTOKEN"] = "a" * 32
    mine = Conversation.objects.get()
    answer = Message.objects.create(conversation=mine, role="assistant", content="An answer")
    other = Message.objects.create(conversation=Conversation.objects.create(), role="assistant", content="x")
    ok = client.post("/api/feedback", {"message_id": answer.pk, "rating": 1}, content_type="application/json")
    assert ok.status_code == 201 and Feedback.objects.get().rating == 1
    again = client.post("/api/feedback", {"message_id": answer.pk, "rating": -1, "comment": "too vague"},
                        content_type="application/json")
    assert again.status_code == 200 and Feedback.objects.get().rating == -1  # replaced, not added
    assert client.post("/api/feedback", {"message_id": other.pk, "rating": -1},
                       content_type="application/json").status_code == 404
    bad = client.post("/api/feedback", {"message_id": answer.pk, "rating": 5}, content_type="application/json")
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_request"
    assert client.post("/api/feedback", "nope", content_type="application/json").json()["error"]["code"] == \
        "invalid_json"




def test_admin_lists_load(admin_client, kb):
    for path in ["chat/conversation", "chat/turnlog", "chat/agenttrace", "chat/checkpointthread",
                 "guards/guardincident", "budget/ledgerentry", "approvals/pendingapproval",
                 "knowledge/document", "knowledge/knowledgechunk", "evals/evalrun"]:
        assert admin_client.get(f"/admin/{path}/").status_code == 200, path
    page = admin_client.get("/admin/knowledge/document/test-retrieval/", {"q": "Wat is haar dagtarief?"})
    assert page.status_code == 200 and b"Beschikbaarheid en tarieven" in page.content
    synced = admin_client.post("/admin/knowledge/document/sync/", follow=True)
    assert b"Knowledge sync queued" in synced.content  # a background job (tests/ops/test_jobs.py)
    from knowledge.tasks import knowledge_sync_task
    from ops.models import Job

    job = Job.objects.get()
    knowledge_sync_task.call(job.pk)  # what the worker runs
    job.refresh_from_db()
    assert job.status == "succeeded" and "71 unchanged" in job.result


def test_the_page_explains_the_twin_and_offers_questions_the_knowledge_base_answers(client, kb):
    html = client.get("/").content.decode()
    assert "approves every message before it is sent" in html
    assert "What is Ledgerline?" in html or "What is " in html
    dutch = client.get("/", HTTP_ACCEPT_LANGUAGE="nl-NL,nl;q=0.9").content.decode()
    assert '<html lang="nl">' in dutch and f"Waar heeft {settings.TWIN_OWNER_NAME} gewerkt?" in dutch
    assert "keurt elk bericht goed voordat het wordt verstuurd" in dutch


def test_static_files_favicon_and_bad_paths(client):
    assert client.get("/static/chat.js").status_code == 200
    assert client.get("/favicon.ico").status_code == 301
    assert client.get("/static/../manage.py").status_code == 404
    assert client.get("/static/%2e%2e/manage.py").status_code == 404


def test_feedback_needs_json_and_the_csrf_token():
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.get("/")
    browser.post("/start/", HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value)
    answer = Message.objects.create(conversation=Conversation.objects.get(), role="assistant", content="An answer")
    body = f'{{"message_id": {answer.pk}, "rating": 1}}'
    # another site's form can send text/plain, but not our token
    assert browser.post("/api/feedback", body, content_type="text/plain").status_code == 415
    assert browser.post("/api/feedback", body, content_type="application/json").status_code == 403
    token = browser.cookies["csrftoken"].value
    ok = browser.post("/api/feedback", body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 201 and not Feedback.objects.exclude(message=answer).exists()


@pytest.mark.django_db(transaction=True)
def test_why_panel_is_for_staff_with_the_trace_permission_only(client, kb):
    import asyncio

    from django.contrib.auth.models import User

    from chat.checkpoints import close_pools
    from chat.providers.offline import OfflineProvider
    from chat.services import conversation_create
    from chat.turns.run import turn_run

    async def one_turn():
        try:
            conversation = await asyncio.to_thread(conversation_create)

            async def emit(event):
                pass

            return await turn_run(conversation_id=conversation.pk, text="What has she built?", emit=emit,
                                  provider=OfflineProvider(owner="Mira Jansen"))
        finally:
            await close_pools()

    result = asyncio.run(one_turn())
    assert client.get(f"/why/{result.message_id}/").status_code == 403  # a visitor
    User.objects.create_user("visitor", password="pw-123456789")
    client.login(username="visitor", password="pw-123456789")
    assert client.get(f"/why/{result.message_id}/").status_code == 403  # logged in, not staff
    staff = User.objects.create_user("staff", password="pw-123456789", is_staff=True)
    client.force_login(staff)
    assert client.get(f"/why/{result.message_id}/").status_code == 403  # staff, not given chat.view_trace
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="view_trace"))
    client.force_login(User.objects.get(pk=staff.pk))
    html = client.get(f"/why/{result.message_id}/").content.decode()
    assert "Why this answer" in html and "What has she built?" in html and "search_knowledge" in html
    assert "<meter" in html and "Curriculum Vitae" in html and "System prompt as it ran" in html
    admin = User.objects.create_superuser("boss", password="pw-123456789")
    client.force_login(admin)
    from chat.models import AgentTrace

    trace = AgentTrace.objects.get(message_id=result.message_id)
    page = client.get(f"/admin/chat/agenttrace/{trace.pk}/change/").content.decode()
    assert "Why this answer" in page and "search_knowledge" in page

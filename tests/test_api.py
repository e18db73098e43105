"""The API as a whole: one error shape, the health report, the docs gate (real HTTP requests
through Django's test client, real Postgres)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from budget.models import BudgetDay
from budget.selectors import budget_day
from chat.models import Conversation, Message
from chat.turns.admission import SESSION_KEY

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "t" * 32


def error_of(response, status: int, code: str) -> dict:
    """The one error shape: JSON {"error": {"code", "message", ...}} with the status."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = json.loads(response.content)
    assert set(body) == {"error"} and body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


def visitor(csrf: bool = True) -> tuple[Client, Message]:
    """A visitor whose session holds a conversation with one answer, with a CSRF cookie and,
    when ``csrf``, the matching X-CSRFToken header (as the chat page sends it)."""
    client = Client(enforce_csrf_checks=True)
    conversation = Conversation.objects.create()
    session = client.session
    session[SESSION_KEY] = str(conversation.pk)
    session.save()
    client.cookies["csrftoken"] = "a" * 32
    if csrf:
        client.defaults["HTTP_X_CSRFTOKEN"] = "a" * 32
    answer = Message.objects.create(conversation=conversation, role="assistant", content="An answer")
    return client, answer


# --- errors ------------------------------------------------------------------------------------

def test_malformed_json_is_400_invalid_json():
    client, _ = visitor()
    for body in [b'{"message_id": 1, "rating": ', b'"\xff\xfe"', b"[" * 100_000]:
        error_of(client.post("/api/feedback", body, content_type="application/json"), 400, "invalid_json")
    error_of(client.post("/api/chat", "{text: 'hi'}", content_type="application/json"), 400, "invalid_json")


def test_a_body_that_is_not_json_is_415_and_never_parsed():
    client, answer = visitor()
    body = json.dumps({"message_id": answer.pk, "rating": 1})
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        error_of(client.post("/api/feedback", body, content_type=content_type), 415, "json_required")
    error_of(Client().post("/api/chat", "text=hi", content_type="text/plain"), 415, "json_required")
    error_of(Client().post("/api/chat", '{"text": "hi"}', content_type="text/plain"), 415, "json_required")


def test_invalid_fields_are_422_invalid_request_with_the_fields():
    client, answer = visitor()
    error = error_of(client.post("/api/feedback", {"message_id": answer.pk, "rating": 5},
                                 content_type="application/json"), 422, "invalid_request")
    assert [f["loc"] for f in error["fields"]] == [["body", "payload", "rating"]]
    assert error["fields"][0]["type"] == "literal_error" and error["fields"][0]["message"]
    error = error_of(Client().post("/api/chat", {"conversation_id": "not-a-uuid"},
                                   content_type="application/json"), 422, "invalid_request")
    assert sorted(f["loc"][-1] for f in error["fields"]) == ["conversation_id", "text"]
    error_of(client.post("/api/feedback", "[1, 2]", content_type="application/json"), 422, "invalid_request")
    error_of(client.post("/api/feedback", {"message_id": answer.pk, "rating": 1, "comment": "x" * 2001},
                         content_type="application/json"), 422, "comment_too_long")


def test_codes_of_the_endpoints_keep_their_status():
    client, _ = visitor()
    other = Message.objects.create(conversation=Conversation.objects.create(), role="assistant", content="x")
    error_of(client.post("/api/feedback", {"message_id": other.pk, "rating": 1}, content_type="application/json"),
             404, "unknown_message")
    no_token, _ = visitor(csrf=False)
    error_of(no_token.post("/api/feedback", {"message_id": other.pk, "rating": 1}, content_type="application/json"),
             403, "csrf_failed")


def test_unknown_paths_and_wrong_methods_answer_in_the_same_shape():
    client = Client()
    for path in ("/api/nope", "/api/health/", "/api/", "/api/admin/approvals/1"):
        error_of(client.get(path), 404, "not_found")
    response = client.get("/api/chat")
    error_of(response, 405, "method_not_allowed")
    assert response["Allow"] == "POST"
    error_of(client.delete("/api/health"), 405, "method_not_allowed")


def test_authentication_errors(settings):
    client = Client()
    settings.TWIN_ADMIN_TOKEN = ""
    error_of(client.get("/api/admin/approvals", headers={"Authorization": f"Bearer {TOKEN}"}), 404, "not_found")
    settings.TWIN_ADMIN_TOKEN = TOKEN
    error_of(client.get("/api/admin/approvals"), 401, "unauthorized")
    error_of(client.get("/api/admin/approvals", headers={"Authorization": "Bearer wrong"}), 401, "unauthorized")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/admin/approvals", headers=auth).json() == []
    error_of(client.post("/api/admin/approvals/99999/decide", {"decision": "approve"},
                         content_type="application/json", headers=auth), 404, "unknown_approval")
    error_of(client.get("/api/admin/approvals?status=bogus", headers=auth), 422, "invalid_request")


def test_a_body_over_the_upload_limit_is_413(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    error_of(Client().post("/api/chat", {"text": "x" * 2000}, content_type="application/json"), 413, "too_large")


# --- health ------------------------------------------------------------------------------------

MONITOR = "monitor-token-" + "m" * 24


def monitor_health(settings):
    settings.TWIN_METRICS_TOKEN = MONITOR
    return Client().get("/api/health", HTTP_AUTHORIZATION=f"Bearer {MONITOR}")


def test_health_reports_every_part_and_no_secret(settings):
    settings.TWIN_API_KEY = "sk-live-do-not-show-this-0123456789"
    response = monitor_health(settings)
    assert response.status_code == 200
    report = response.json()
    assert report["status"] == "ok" and report["database"] == {"ok": True}
    checkpointer = report["checkpointer"]
    assert checkpointer["ok"] and checkpointer["schema_version"] == checkpointer["expected_version"] >= 9
    assert report["provider"] == {"name": "offline", "model": settings.TWIN_MODEL, "offline": True,
                                  "api_key_set": True}
    assert report["budget"] == {"ok": True, "day": budget_day().isoformat(), "spent_usd": "0",
                                "reserved_usd": "0", "limit_usd": str(settings.TWIN_DAILY_BUDGET_USD),
                                "exhausted": False}
    text = response.content.decode()
    db = connection.settings_dict
    for secret in (settings.TWIN_API_KEY, settings.SECRET_KEY, db["PASSWORD"]):
        assert secret and secret not in text
    settings.TWIN_API_KEY = ""
    assert monitor_health(settings).json()["provider"]["api_key_set"] is False


def test_anonymous_health_is_the_status_only_and_checked_at_most_every_few_seconds(settings, django_user_model):
    from ops import health

    health.health_status_forget()
    response = Client().get("/api/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    # staff without the permission see no more than anyone
    staff = Client()
    staff.force_login(django_user_model.objects.create_user("desk", password="pw-123456789", is_staff=True))
    assert staff.get("/api/health").json() == {"status": "ok"}
    assert Client().get("/api/health", HTTP_AUTHORIZATION="Bearer " + "x" * 30).json() == {"status": "ok"}
    # with it, the parts
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("ops", password="pw-123456789", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_trace"))
    ops = Client()
    ops.force_login(user)
    assert set(ops.get("/api/health").json()) == {"status", "database", "checkpointer", "provider", "provider_check",
                                                  "budget"}
    # a status is reused for STATUS_SECONDS in this process, then checked again
    calls = []
    real = health.anonymous_status
    health.anonymous_status = lambda: calls.append(1) or real()
    try:
        health.health_status_forget()
        for _ in range(5):
            health.health_status(now=1000.0)
        assert len(calls) == 1
        health.health_status(now=1000.0 + health.STATUS_SECONDS)
        assert len(calls) == 2
    finally:
        health.anonymous_status = real
        health.health_status_forget()


def test_an_exhausted_budget_is_reported_but_not_degraded(settings):
    settings.TWIN_DAILY_BUDGET_USD = Decimal("1.00")
    BudgetDay.objects.create(day=budget_day(), spent_usd=Decimal("0.75"), reserved_usd=Decimal("0.25"))
    response = monitor_health(settings)
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert response.json()["budget"] | {"day": None} == {
        "ok": True, "day": None, "spent_usd": "0.750000", "reserved_usd": "0.250000", "limit_usd": "1.00",
        "exhausted": True}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_checkpointer_is_degraded_503(settings):
    # Django's connection is open already; the checkpointer connects anew, here to a port where
    # nothing listens: a real refused connection.
    settings_dict = connection.settings_dict
    saved = settings_dict["HOST"], settings_dict["PORT"]
    settings_dict["HOST"], settings_dict["PORT"] = "127.0.0.1", str(free_port())
    try:
        response = monitor_health(settings)
    finally:
        settings_dict["HOST"], settings_dict["PORT"] = saved
    assert response.status_code == 503
    report = response.json()
    assert report["status"] == "degraded" and report["database"] == {"ok": True}
    assert report["checkpointer"]["ok"] is False and report["checkpointer"]["schema_version"] is None
    assert report["budget"]["ok"] is True


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_database_is_degraded_503(settings):
    settings_dict = connection.settings_dict
    saved = settings_dict["HOST"], settings_dict["PORT"]
    connection.close()
    connection.close_pool()  # the pool was made from the settings: made again from the changed ones
    settings_dict["HOST"], settings_dict["PORT"] = "127.0.0.1", str(free_port())
    try:
        response = monitor_health(settings)
    finally:
        connection.close()
        connection.close_pool()
        settings_dict["HOST"], settings_dict["PORT"] = saved
    assert response.status_code == 503
    report = response.json()
    assert report["status"] == "degraded" and report["database"] == {"ok": False}
    assert report["checkpointer"]["ok"] is False
    assert report["budget"]["ok"] is False and report["budget"]["exhausted"] is True  # fails closed
    assert report["provider"]["offline"] is True


# --- docs --------------------------------------------------------------------------------------

def test_public_docs_are_served_offline(settings):
    settings.TWIN_API_DOCS = "public"
    client = Client()
    docs = client.get("/api/docs")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "cdn" not in html.lower() and "//" not in html  # no other host, not even scheme-relative
    assert '"validatorUrl": null' in html  # no badge fetched from validator.swagger.io
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for asset in assets:
        assert asset.startswith("/static/ninja/"), asset
        assert client.get(asset).status_code == 200, asset
    schema = client.get("/api/openapi.json").json()
    assert {"/api/chat", "/api/feedback", "/api/health"} <= set(schema["paths"])


@pytest.mark.parametrize("path", ["/api/docs", "/api/openapi.json"])
def test_staff_docs_are_for_staff_with_the_trace_permission_only(settings, path):
    from django.contrib.auth.models import Permission

    settings.TWIN_API_DOCS = "staff"
    client = Client()
    error_of(client.get(path), 404, "not_found")
    client.force_login(User.objects.create_user("visitor", password="pw-123456789"))
    error_of(client.get(path), 404, "not_found")
    staff = User.objects.create_user("staff", password="pw-123456789", is_staff=True)
    client.force_login(staff)
    error_of(client.get(path), 404, "not_found")  # staff, but not given chat.view_trace
    staff.user_permissions.add(Permission.objects.get(codename="view_trace"))
    client.force_login(User.objects.get(pk=staff.pk))  # permissions are cached per user object
    assert client.get(path).status_code == 200
    settings.TWIN_API_DOCS = "off"
    error_of(client.get(path), 404, "not_found")


@pytest.mark.parametrize(("env", "expected"), [({"DEBUG": "1"}, "public"), ({"DEBUG": "0"}, "staff"),
                                               ({"DEBUG": "0", "TWIN_API_DOCS": "public"}, "public"),
                                               ({"DEBUG": "1", "TWIN_API_DOCS": "OFF"}, "off")])
def test_docs_default_to_staff_without_debug(env, expected):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "DEBUG"}
    result = subprocess.run(
        [sys.executable, "-c", "import os; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
                               "from django.conf import settings; print(settings.TWIN_API_DOCS)"],
        cwd=ROOT, env=environment | {"SECRET_KEY": "k" * 50} | env, capture_output=True, text=True, check=False)
    assert result.stdout.strip() == expected, result.stderr


def test_a_bad_docs_setting_stops_start_up():
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")} | {"TWIN_API_DOCS": "yes"}
    result = subprocess.run(
        [sys.executable, "-c", "import os; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
                               "from django.conf import settings; settings.TWIN_API_DOCS"],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=False)
    assert result.returncode != 0 and "TWIN_API_DOCS must be one of off, staff, public" in result.stderr


def test_a_burst_of_status_calls_runs_one_report_and_serves_the_last_status_meanwhile(monkeypatch):
    """200 callers at once when the kept status has expired: one of them refreshes it, behind a
    lock; the others get the last value at once instead of each opening connections."""
    import threading
    import time as clock

    from ops import health
    from tests.concurrently import at_once

    calls, release = [], threading.Event()

    def slow_report() -> dict:
        calls.append(1)
        release.wait(10)
        return {"status": "ok"}

    monkeypatch.setattr(health, "anonymous_status", lambda: slow_report()["status"])
    health.health_status_forget()
    health._status["last"] = (clock.monotonic() - 60, "degraded")  # expired a minute ago
    answers: list[str] = []
    try:
        at_once(*[lambda: answers.append(health.health_status()) for _ in range(200)],
                lambda: (clock.sleep(0.5), release.set()))
    finally:
        release.set()
        health.health_status_forget()
    assert len(calls) == 1 and len(answers) == 200
    assert answers.count("degraded") >= 199 and set(answers) <= {"ok", "degraded"}

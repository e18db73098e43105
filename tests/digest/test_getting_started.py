"""Getting started on the admin's index: each step's state and where to do it, until every step is
done; the notices' "Send a test" button (a POST, CSRF-checked, staff who may see the notices);
and whether the admin password is still the one ensure_admin generated."""

from __future__ import annotations

import io
import re

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core import mail
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from approvals.models import GeneratedPassword
from digest.getting_started import getting_started
from digest.models import NoticeDelivery, OwnerNotice
from ops.models import Job, ProviderCheck
from tests.fakes.receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(settings):
    settings.TWIN_ADMIN_PASSWORD = ""
    call_command("ensure_admin", stdout=io.StringIO())
    return get_user_model().objects.get(username=settings.TWIN_ADMIN_USER)


def steps(user) -> dict:
    checklist = getting_started(user)
    return {step.key: step for step in checklist["steps"]} if checklist else {}


def test_a_fresh_install_shows_every_step_left_with_where_to_do_it(owner, settings):
    settings.TWIN_PROVIDER = "offline"
    settings.TWIN_EMBED_ORIGINS = []
    found = steps(owner)
    assert [key for key, step in found.items() if not step.done] == ["owner", "content", "model", "embed",
                                                                     "notices", "password"]
    assert "sample owner" in found["owner"].state
    assert found["model"].state.startswith("Offline mode: answers quote your documents.")
    assert found["embed"].snippet == (f'<script src="{settings.TWIN_SITE_URL}/embed.js" '
                                      f'data-lang="{settings.TWIN_OWNER_LANGUAGE}" async></script>')
    assert found["embed"].command == "TWIN_EMBED_ORIGINS=https://your-site.example"
    assert found["password"].url == "/admin/password_change/"

    client = Client()
    client.force_login(owner)
    page = client.get("/admin/").content.decode()
    assert 'id="getting-started"' in page and "6 of 6 steps left" in page
    assert page.index('id="getting-started"') < page.index('id="owner-dashboard"')
    assert re.search(r'<form method="post" action="/admin/digest/noticedelivery/test/">', page)


def test_the_password_step_is_done_once_the_generated_password_is_changed(owner):
    mark = GeneratedPassword.objects.get(user=owner)
    assert mark.password == owner.password and "generated" not in mark.password  # a hash, not the password
    assert not steps(owner)["password"].done
    owner.set_password("the owner's own choice")
    owner.save()
    assert steps(owner)["password"].done


def test_a_password_given_in_the_environment_is_not_called_generated(settings):
    settings.TWIN_ADMIN_PASSWORD = "chosen-by-the-owner"
    call_command("ensure_admin", stdout=io.StringIO())
    user = get_user_model().objects.get(username=settings.TWIN_ADMIN_USER)
    assert not GeneratedPassword.objects.exists()
    assert steps(user)["password"].done


def test_the_model_step_reports_the_last_check(owner, settings):
    settings.TWIN_PROVIDER = "openai"
    assert "never checked" in steps(owner)["model"].state
    ProviderCheck.objects.create(provider="openai", model="gpt-x", ok=False, checked_at=timezone.now(),
                                 result={"fixes": {"streams_tool_calls": "no tool call came back"}, "errors": []})
    model = steps(owner)["model"]
    assert not model.done and "gpt-x: the last check failed" in model.state
    assert model.details == ["no tool call came back"]
    ProviderCheck.objects.update(ok=True)
    assert steps(owner)["model"].done


def test_the_content_step_shows_the_last_import_and_its_error(owner):
    Job.objects.create(kind=Job.Kind.KNOWLEDGE_IMPORT, status="failed", error="https://x.example/: unreachable")
    content = steps(owner)["content"]
    assert not content.done
    assert any("unreachable" in line for line in content.details)


def test_send_a_test_is_a_post_with_csrf_for_staff_who_may_see_notices(owner, settings):
    settings.TWIN_OWNER_EMAIL = "owner@example.org"
    settings.TWIN_NOTIFY_WEBHOOK = ""
    url = "/admin/digest/noticedelivery/test/"
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.get(url).status_code == 405
    assert client.post(url).status_code == 403  # no CSRF token
    assert not OwnerNotice.objects.exists()

    staff = get_user_model().objects.create_user("helper", password="x", is_staff=True)
    other = Client()
    other.force_login(staff)
    assert other.post(url).status_code == 403
    assert Client().post(url).status_code == 302  # to the login

    owner_client = Client()
    owner_client.force_login(owner)
    response = owner_client.post(url)
    assert response.status_code == 302 and response["Location"] == "/admin/#getting-started"
    [notice] = OwnerNotice.objects.all()
    assert notice.kind == OwnerNotice.Kind.TEST
    assert [m.to for m in mail.outbox] == [["owner@example.org"]]
    notices = steps(owner)["notices"]
    assert notices.done and notices.details == ["e-mail to owner@example.org: arrived."]

    staff.user_permissions.add(Permission.objects.get(codename="view_noticedelivery"))
    assert other.post(url).status_code == 302
    assert OwnerNotice.objects.count() == 2


def test_a_failed_test_says_why(owner, settings):
    receiver = Receiver().start()
    try:
        receiver.statuses = [500]
        settings.TWIN_NOTIFY_EMAIL = False
        settings.TWIN_NOTIFY_WEBHOOK = receiver.url + "/hook"
        settings.TWIN_NOTIFY_WEBHOOK_SECRET = "a-test-secret-of-32-characters!!"
        client = Client()
        client.force_login(owner)
        client.post("/admin/digest/noticedelivery/test/")
    finally:
        receiver.stop()
    [delivery] = NoticeDelivery.objects.all()
    assert delivery.status == NoticeDelivery.Status.FAILED
    notices = steps(owner)["notices"]
    assert not notices.done
    assert re.fullmatch(r"webhook to 127\.0\.0\.1.*: failed: .*500.*", notices.details[0])


def test_once_every_step_is_done_the_checklist_is_gone(owner, settings, tmp_path):
    (tmp_path / "owner.yaml").write_text(yaml.safe_dump({"name": "Sam Doe"}))
    settings.TWIN_KNOWLEDGE_DIR = tmp_path
    settings.TWIN_OWNER_NAME = "Sam Doe"
    settings.TWIN_PROVIDER = "openai"
    settings.TWIN_EMBED_ORIGINS = ["https://sam.example"]
    settings.TWIN_SITE_URL = "https://twin.sam.example"
    settings.TWIN_OWNER_EMAIL = "sam@example.org"
    settings.TWIN_NOTIFY_WEBHOOK = ""
    ProviderCheck.objects.create(provider="openai", model="gpt-x", ok=True, checked_at=timezone.now(), result={})
    from knowledge.models import Document

    Document.objects.create(path="cv.md", title="CV", kind="cv", lang="en", body="x", content_hash="h")
    owner.set_password("the owner's own choice")
    owner.save()
    client = Client()
    client.force_login(owner)
    client.post("/admin/digest/noticedelivery/test/")
    assert getting_started(owner) is None
    assert 'id="getting-started"' not in client.get("/admin/").content.decode()
    staff = get_user_model().objects.create_user("viewer", password="x", is_staff=True)
    assert getting_started(staff) is None  # the owner's account only


@pytest.mark.parametrize(("language", "expected"), [
    ("en", ["Getting started", "6 of 6 steps left", "Offline mode: answers quote your documents.", "Send a test",
            "Notice deliveries"]),
    ("nl", ["Aan de slag", "nog 6 van 6 stappen", "Offline modus: antwoorden citeren je documenten.",
            "Stuur een test", "Berichtbezorgingen"]),
])
def test_the_checklist_and_the_notices_list_speak_the_owners_language(owner, settings, language, expected):
    """In Dutch and English, as the rest of the admin; the index lists "Notice deliveries", not the
    "Notice deliverys" Django made of the model's name."""
    settings.TWIN_OWNER_LANGUAGE = language
    settings.TWIN_PROVIDER = "offline"
    settings.TWIN_EMBED_ORIGINS = []
    client = Client()
    client.force_login(owner)
    page = client.get("/admin/").content.decode()
    for text in expected:
        assert text in page, text
    assert "deliverys" not in page.lower()

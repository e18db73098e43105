"""Long owner actions through the task queue: the admin queues a job (change permission only),
the worker runs it with progress the admin shows, and a replay or a second click changes nothing."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from evals.models import EvalRun
from knowledge.models import Document
from knowledge.tasks import knowledge_sync_task
from ops.models import Job
from ops.services import JobBusy, job_run, job_start

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = """---
title: {title}
kind: article
lang: en
---
{title} is about {topic}.

## Details
More about {topic}.
"""


@pytest.fixture
def content(settings, tmp_path):
    for title, topic in (("Alpha", "trains"), ("Beta", "bridges")):
        (tmp_path / f"{title.lower()}.md").write_text(NOTE.format(title=title, topic=topic), encoding="utf-8")
    settings.TWIN_KNOWLEDGE_DIR = tmp_path
    return tmp_path


def staff(name: str, *perms: str) -> Client:
    user = User.objects.create_user(name, password="x" * 12, is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    client = Client()
    client.force_login(user)
    return client


def worker_once() -> None:
    call_command("twin_worker", "--once")


def test_the_admin_queues_a_sync_the_worker_runs_with_progress(admin_client, content):
    changelist = reverse("admin:knowledge_document_changelist")
    response = admin_client.post(reverse("admin:knowledge_sync"), follow=True)
    assert "Knowledge sync queued for the worker" in response.content.decode()
    [job] = Job.objects.all()
    assert (job.kind, job.status, job.requested_by) == ("knowledge_sync", "queued", "admin")
    task = DBTaskResult.objects.get(id=job.task_id)
    assert task.queue_name == "owner" and task.task_path == "knowledge.tasks.knowledge_sync_task"
    assert not Document.objects.exists()  # nothing ran inside the request

    again = admin_client.post(reverse("admin:knowledge_sync"), follow=True)
    assert "A knowledge sync is already queued" in again.content.decode() and Job.objects.count() == 1
    page = admin_client.get(reverse("admin:ops_job_changelist")).content.decode()
    assert "waiting for the worker" in page and 'http-equiv="refresh"' in page

    worker_once()
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.total == job.done == 8  # 4 chunks, 2 models
    assert job.result.startswith("2 documents") and job.started_at <= job.finished_at
    assert sorted(Document.objects.values_list("title", flat=True)) == ["Alpha", "Beta"]
    page = admin_client.get(reverse("admin:ops_job_change", args=[job.pk])).content.decode()
    assert '<progress value="8" max="8">' in page and "2 documents" in page and 'http-equiv="refresh"' not in page
    assert re.search(r"Last knowledge sync: <a[^>]*>Succeeded</a>", admin_client.get(changelist).content.decode())

    # A replayed task finds the job done: nothing runs twice.
    knowledge_sync_task.enqueue(job.pk)
    worker_once()
    assert DBTaskResult.objects.order_by("-enqueued_at").first().return_value == f"job {job.pk} is succeeded: " \
                                                                                 "nothing to do"


def test_syncing_needs_the_change_permission_not_just_view(content):
    viewer = staff("viewer", "knowledge.view_document")
    changelist = viewer.get(reverse("admin:knowledge_document_changelist")).content.decode()
    assert "Sync knowledge now" not in changelist and "sync_now" not in changelist
    assert viewer.post(reverse("admin:knowledge_sync")).status_code == 403
    assert not Job.objects.exists()

    editor = staff("editor", "knowledge.view_document", "knowledge.change_document")
    assert "Sync knowledge now" in editor.get(reverse("admin:knowledge_document_changelist")).content.decode()
    assert editor.post(reverse("admin:knowledge_sync")).status_code == 302
    assert Job.objects.get().requested_by == "editor"


def test_a_failing_job_is_recorded_and_a_silent_one_gives_way():
    job = job_start(kind=Job.Kind.KNOWLEDGE_SYNC, task=knowledge_sync_task)
    with pytest.raises(JobBusy) as busy:
        job_start(kind=Job.Kind.KNOWLEDGE_SYNC, task=knowledge_sync_task)
    assert busy.value.job == job

    def broken(progress) -> str:
        progress(1, 4, "first batch")
        raise RuntimeError("embedding backend down; key sk-abcdefghijklmnopqrstuvwx")

    with pytest.raises(RuntimeError):
        job_run(job_id=job.pk, work=broken)
    job.refresh_from_db()
    assert job.status == "failed" and "embedding backend down" in job.error and "sk-abcdef" not in job.error
    assert (job.done, job.total, job.note) == (1, 4, "first batch")

    # A running job whose worker went silent (killed) does not block the next one forever.
    second = job_start(kind=Job.Kind.KNOWLEDGE_SYNC, task=knowledge_sync_task)
    Job.objects.filter(pk=second.pk).update(status="running", heartbeat_at=timezone.now() - dt.timedelta(hours=1))
    third = job_start(kind=Job.Kind.KNOWLEDGE_SYNC, task=knowledge_sync_task)
    second.refresh_from_db()
    assert second.status == "failed" and "worker stopped" in second.error and third.status == "queued"


def test_an_eval_run_goes_through_the_queue_from_the_runs_list(admin_client):
    run = EvalRun.objects.create(suite="guards", score=1.0, threshold=0.9, passed=True)
    viewer = staff("viewer", "evals.view_evalrun")
    listing = reverse("admin:evals_evalrun_changelist")
    assert "run_again" not in viewer.get(listing).content.decode()

    response = admin_client.post(listing, {"action": "run_again", "_selected_action": [run.pk]}, follow=True)
    assert "Eval run of guards" in response.content.decode()
    job = Job.objects.get(kind="eval_run")
    assert job.arguments == {"suite": "guards", "provider": ""}

    worker_once()
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert "== guards:" in job.result and job.done == job.total > 50
    assert EvalRun.objects.filter(suite="guards").count() == 2  # the new run is in the history

"""Durability across real processes: the process that paused the thread is killed, the owner
decides from another process, the worker (a third) resumes it and e-mails exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from approvals.models import ContactMessage, PendingApproval

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]

# Runs the visitor's turn, then hangs as a serving process would, until it is killed.
VISITOR = """
import asyncio, time
import django; django.setup()
from chat.services import conversation_create
from chat.turns.run import turn_run
from chat.checkpoints import close_pools
async def main():
    conversation = await asyncio.to_thread(conversation_create)
    async def emit(event): pass
    await turn_run(conversation_id=conversation.pk, emit=emit,
                   text="Can I send her a message? I'm Tom, tom@example.com")
    await close_pools()
asyncio.run(main())
print("paused", flush=True)
time.sleep(600)
"""


@pytest.fixture
def env(kb, tmp_path):
    sd = connection.settings_dict
    return dict(os.environ, DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/"
                f"{sd['NAME']}", TWIN_PROVIDER="offline", DJANGO_SETTINGS_MODULE="twinsite.settings",
                EMAIL_BACKEND="file", EMAIL_FILE_PATH=str(tmp_path / "mail"))


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], check=False, cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def test_decision_after_a_sigkill_is_resumed_by_the_worker_and_mailed_once(env, tmp_path):
    visitor = subprocess.Popen([sys.executable, "-c", VISITOR], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert visitor.stdout.readline().strip() == "paused"
        approval = PendingApproval.objects.get()
        assert approval.status == "pending" and len(approval.interrupt_id) == 32
        assert not ContactMessage.objects.exists()
    finally:
        visitor.send_signal(signal.SIGKILL)
        visitor.wait(timeout=30)
    assert visitor.returncode == -signal.SIGKILL

    decided = manage(env, "approvals", "approve", str(approval.pk), "--as", "mira")
    assert decided.returncode == 0, decided.stderr
    assert not ContactMessage.objects.exists()  # the decision alone runs nothing

    worker = manage(env, "twin_worker", "--once")
    assert worker.returncode == 0, worker.stderr
    approval.refresh_from_db()
    assert approval.resume_status == "done", approval.resume_error
    [message] = ContactMessage.objects.all()
    assert message.sent_at is not None and message.approval_id == approval.pk
    mails = list((tmp_path / "mail").glob("*"))
    assert len(mails) == 1 and "tom@example.com" in mails[0].read_text()

    # A replay (a second worker, a re-enqueued task) changes nothing.
    from chat.tasks import approval_resume_task

    approval_resume_task.enqueue(approval.pk)
    time.sleep(0.1)
    again = manage(env, "twin_worker", "--once")
    assert again.returncode == 0, again.stderr
    assert ContactMessage.objects.count() == 1 and len(list((tmp_path / "mail").glob("*"))) == 1

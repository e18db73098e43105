"""Processes killed with SIGKILL at the worst moments, with real daphne and worker processes on
the test database: what the visitor sees afterwards and what is stored."""

from __future__ import annotations

import time

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from websockets.exceptions import ConnectionClosed

from budget.models import BudgetDay, LedgerEntry
from chat.agent.graph import build_graph
from chat.checkpoints import sync_saver_connection
from chat.models import AgentTrace, Message, TurnLog
from chat.services import conversation_create
from chat.texts import text as say
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text
from tests.faults.conftest import Daphne, Visitor, fake_provider_env, manage, session_cookie, twin_env, worker

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "What kind of bookkeeping software has she built?"


def checkpoint(conversation_id):
    with sync_saver_connection() as conn:
        return build_graph().compile(checkpointer=PostgresSaver(conn)).get_state(
            {"configurable": {"thread_id": str(conversation_id)}})


def assert_no_half_written_rows() -> None:
    assert not Message.objects.filter(role="user", pk__in=Message.objects.values("pk").difference(
        TurnLog.objects.values("user_message_id"))).exists()
    assert not Message.objects.filter(role="assistant", turn__isnull=True).exists()
    assert AgentTrace.objects.count() == TurnLog.objects.count() == Message.objects.filter(role="assistant").count()


def test_a_server_killed_mid_stream_is_recorded_as_aborted_and_the_visitor_finds_a_clean_state(tmp_path, processes):
    with FakeOpenAI() as fake:
        fake.add(Reply(chunks=sse_text(*(f"word{i} " for i in range(80))), delay=0.1))  # ~8 s of answer
        env = twin_env(**fake_provider_env(fake.base_url))
        conversation = conversation_create()
        cookie = session_cookie(conversation.pk)
        first = Daphne(env, tmp_path / "daphne.log")
        processes.append(first)
        visitor = Visitor(first, conversation.pk, cookie)
        visitor.send({"type": "ask", "text": QUESTION})
        tokens = 0
        while tokens < 3:
            tokens += visitor.event()["type"] == "token"
        first.kill()
        with pytest.raises(ConnectionClosed):
            while True:
                visitor.event(timeout=10)

        # What the dead process left: the question, no record, an open reservation, and no
        # checkpoint of the run: it is written once, when a run ends (chat.checkpoints.DURABILITY),
        # so the thread never saw the question. That is all a crash loses: the run's progress.
        assert list(Message.objects.values_list("role", flat=True)) == ["user"]
        assert not TurnLog.objects.exists()
        [entry] = LedgerEntry.objects.all()
        assert entry.status == "reserved" and entry.reserved_usd > 0
        assert checkpoint(conversation.pk).values.get("messages") is None

        # The restart: the worker (its sweep runs at start) and a new server.
        processes.append(worker(env, tmp_path / "worker.log"))
        second = Daphne(env, tmp_path / "daphne.log")
        processes.append(second)
        deadline = time.monotonic() + 60
        while not TurnLog.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        turn = TurnLog.objects.get()
        assert (turn.outcome, turn.error_code, turn.user_message.content) == ("aborted", "unfinished", QUESTION)
        entry.refresh_from_db()
        assert (entry.status, entry.amount_usd, entry.turn_id) == ("expired", entry.reserved_usd, turn.pk)
        assert turn.cost_usd == entry.amount_usd and BudgetDay.objects.get().reserved_usd == 0
        assert checkpoint(conversation.pk).values.get("messages") is None  # nothing to close, no answer
        assert_no_half_written_rows()

        visitor = Visitor(second, conversation.pk, cookie)
        visitor.send({"type": "sync", "after": 0})
        history = visitor.until("history")[-1]
        assert history["running"] is False
        assert history["messages"] == [{"message_id": turn.assistant_message_id, "answer": say("error.aborted", "en"),
                                        "citations": [], "outcome": "aborted"}]
        fake.add(Reply(chunks=sse_text("She built ", "Ledgerline.")))
        visitor.send({"type": "ask", "text": "And what is Ledgerline?"})
        done = visitor.until("done")[-1]
        visitor.close()
    assert done["answer"] == "She built Ledgerline."
    # The model saw no trace of the aborted turn: history holds only completed question/answer pairs.
    assert [m["content"] for m in fake.requests[-1]["body"]["messages"] if m["role"] == "user"] == [
        "And what is Ledgerline?"]
    final = checkpoint(conversation.pk)
    assert final.next == () and [m["role"] for m in final.values["messages"]] == ["user", "assistant"]
    outcomes = list(TurnLog.objects.order_by("created_at").values_list("outcome", flat=True))
    assert outcomes == ["aborted", done["outcome"]]
    assert BudgetDay.objects.get().reserved_usd == 0
    assert set(LedgerEntry.objects.values_list("status", flat=True)) == {"expired", "settled"}
    assert_no_half_written_rows()


def test_killed_while_an_approval_waits_and_again_mid_resume_the_resume_happens_exactly_once(tmp_path, processes, kb):
    from approvals.models import ContactMessage, PendingApproval
    from chat.selectors import conversation_since
    from chat.turns.decisions import approval_decide
    from chat.turns.resume import approval_resume_sync
    from tests.fakes.model_brain import OfflineBrain

    mail = tmp_path / "mail"
    with FakeOpenAI(brain=OfflineBrain()) as fake:
        env = twin_env(**fake_provider_env(fake.base_url), EMAIL_BACKEND="file", EMAIL_FILE_PATH=str(mail))
        conversation = conversation_create()
        server = Daphne(env, tmp_path / "daphne.log")
        processes.append(server)
        visitor = Visitor(server, conversation.pk, session_cookie(conversation.pk))
        visitor.send({"type": "ask", "text": "Can I send her a message? I'm Tom, tom@example.com"})
        events = visitor.until("done")
        assert [e["status"] for e in events if e["type"] == "approval"] == ["pending"]
        server.kill()  # the serving process dies while the request waits for the owner
        approval = PendingApproval.objects.get()

        approval_decide(approval_id=approval.pk, decision="approve", actor="mira")
        asked = len(fake.requests)
        fake.add(Reply(wait=30))  # the follow-up's model call hangs: the worker dies mid-resume
        first = worker(env, tmp_path / "worker.log")
        processes.append(first)
        deadline = time.monotonic() + 60
        while len(fake.requests) == asked and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        first.kill()
        first.wait(timeout=20)
        # Died half-way: the approved message is recorded (not yet mailed), the follow-up never
        # came, and the thread still waits at its interrupt (a run's checkpoint is written when
        # it ends): the next resume runs the tool again, which finds the message by its key.
        [message] = ContactMessage.objects.all()
        assert message.sent_at is None
        approval.refresh_from_db()
        assert approval.resume_status == "queued"
        waiting = checkpoint(conversation.pk)
        assert [i.value["approval_id"] for t in waiting.tasks for i in t.interrupts] == [approval.pk]

        # A minute later the sweep's safety net re-enqueues the resume.
        PendingApproval.objects.filter(pk=approval.pk).update(resume_next_at=approval.decided_at)
        again = manage(env, "twin_worker", "--once")
        assert again.returncode == 0, again.stderr
    approval.refresh_from_db()
    assert approval.resume_status == "done", approval.resume_error
    message.refresh_from_db()
    assert message.sent_at is not None
    mails = list(mail.glob("*"))
    assert len(mails) == 1 and "tom@example.com" in mails[0].read_text()
    resumed = checkpoint(conversation.pk)
    assert resumed.next == ()
    assert [m.get("tool_call_id") for m in resumed.values["messages"]].count(approval.execution_call_id) == 1
    [follow_up] = TurnLog.objects.filter(outcome="approval_resolved")
    assert conversation_since(conversation_id=conversation.pk, after=0)["messages"][-1]["message_id"] == \
        follow_up.assistant_message_id

    assert approval_resume_sync(approval_id=approval.pk) == "already_done"  # a replay changes nothing
    assert ContactMessage.objects.count() == 1 and len(list(mail.glob("*"))) == 1
    assert TurnLog.objects.filter(outcome="approval_resolved").count() == 1
    assert_no_half_written_rows()


"""Postgres gone in the middle of a turn, for a real daphne process whose every database
connection (Django's, the checkpointer's pool, the lock connection, the channel layer) goes through a TCP
proxy on loopback that the test cuts and restores; the shared test server keeps running."""

from __future__ import annotations

import httpx
import pytest
from django.db import connection
from websockets.exceptions import ConnectionClosed

from chat.models import Message, TurnLog
from chat.services import conversation_create
from chat.texts import text as say
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text
from tests.faults.conftest import Daphne, TcpProxy, Visitor, fake_provider_env, session_cookie, twin_env

MONITOR = "monitor-token-" + "m" * 24  # the health report's parts are for a monitor with the metrics token

pytestmark = pytest.mark.django_db(transaction=True)


def test_postgres_gone_mid_turn_fails_closed_and_the_server_recovers_without_a_restart(tmp_path, processes):
    monitor = {"Authorization": f"Bearer {MONITOR}"}
    proxy = TcpProxy(int(connection.settings_dict["PORT"]))
    unavailable = say("error.unavailable", "en")
    try:
        with FakeOpenAI() as fake, httpx.Client(timeout=30) as http:
            fake.add(Reply(chunks=sse_text(*(f"word{i} " for i in range(30))), delay=0.05))
            env = twin_env(db_port=proxy.port, TWIN_METRICS_TOKEN=MONITOR, **fake_provider_env(fake.base_url))
            conversation = conversation_create()
            cookie = session_cookie(conversation.pk)
            server = Daphne(env, tmp_path / "daphne.log")
            processes.append(server)
            visitor = Visitor(server, conversation.pk, cookie)
            visitor.send({"type": "ask", "text": "What does she build?"})
            tokens = 0
            while tokens < 3:
                tokens += visitor.event()["type"] == "token"
            proxy.cut()

            # The turn ends politely: a coded error and its done, the socket stays open.
            events = [e for e in visitor.until("done", timeout=60) if e["type"] != "token"]
            assert events == [{"type": "error", "code": "unavailable", "in_turn": True, "message": unavailable},
                              {"type": "done", "outcome": "error", "message_id": None,
                               "answer": events[-1]["answer"], "citations": [],
                               "unsupported": []}]
            visitor.send({"type": "ask", "text": "Are you there?"})  # asked while Postgres is away
            assert visitor.until("done") == [{"type": "error", "in_turn": False, "code": "unavailable",
                                              "message": unavailable}]
            # Pages, the API and new sockets answer 503 / a code, never a 500.
            page = http.get(server.url + "/", headers={"Cookie": cookie})
            assert (page.status_code, page.headers["Retry-After"]) == (503, "30") and unavailable in page.text
            health = http.get(server.url + "/api/health", headers=monitor)
            assert health.status_code == 503 and health.json()["database"] == {"ok": False}
            chat = http.post(server.url + "/api/chat", json={"text": "Hello?"}, headers={"Cookie": cookie})
            assert (chat.status_code, chat.json()["error"]["code"]) == (503, "unavailable")
            late = Visitor(server, conversation.pk, cookie)
            assert late.event()["code"] == "unavailable"
            with pytest.raises(ConnectionClosed) as closed:
                late.event()
            assert closed.value.rcvd.code == 4503  # as HTTP 503

            proxy.restore()  # Postgres is back: no restart, the pools and connections heal
            assert http.get(server.url + "/api/health", headers=monitor).status_code == 200
            fake.add(Reply(chunks=sse_text("Back ", "again.")))
            visitor.send({"type": "ask", "text": "And now?"})
            done = visitor.until("done")[-1]
            visitor.close()
            assert http.get(server.url + "/", headers={"Cookie": cookie}).status_code == 200
        assert (done["outcome"], done["answer"]) == ("declined", "Back again.")
    finally:
        proxy.close()
    # Nothing half-written: the cut turn was recorded as aborted before the next one started.
    turns = list(TurnLog.objects.order_by("created_at").values_list("user_message__content", "outcome", "error_code"))
    assert turns == [("What does she build?", "aborted", "unfinished"), ("And now?", "declined", "")]
    assert list(Message.objects.values_list("role", flat=True)) == ["user", "assistant", "user", "assistant"]

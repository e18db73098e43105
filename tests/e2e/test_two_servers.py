"""Two daphne processes and the worker on one Postgres (the test database), as a deployment runs
them: visitors on real WebSockets, the model a fake OpenAI-compatible server on loopback.

Shown across processes: one turn at a time per conversation (the advisory lock), the per-address
rate limit (counters in Postgres), and an approval decided through process A's API, resumed by
the worker and pushed to the visitor's sockets on A and on B (the channel layer)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from websockets.asyncio.client import connect

from chat.services import conversation_create
from chat.turns.admission import SESSION_KEY
from tests.fakes.openai_server import FakeOpenAI, Reply, sse_text

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "e2e-admin-token-0123456789abcdef"
WAIT = 90  # seconds: the first turn of each process loads the embedding models


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sse_tool_call(name: str, arguments: dict) -> list[str]:
    call = {"index": 0, "id": "call_e2e_1", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
              {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}]
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]


@pytest.fixture
def fleet(kb, tmp_path):
    """A fake model server, daphne A and B on free ports, and the worker, all on the test database."""
    sd = connection.settings_dict
    with FakeOpenAI() as model:
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="twinsite.settings",
                   DATABASE_URL=f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{sd['PORT']}/{sd['NAME']}",
                   TWIN_PROVIDER="openai_compatible", TWIN_BASE_URL=model.base_url, TWIN_MODEL="fake-1",
                   TWIN_PRICING_OVERRIDES='{"openai_compatible/fake-1": [0, 0, 0]}', TWIN_PROVIDER_MAX_ATTEMPTS="1",
                   TWIN_ADMIN_TOKEN=TOKEN, TWIN_TRUSTED_PROXIES="1", TWIN_RATE_TURNS="3/10m",
                   TWIN_WORKER_SWEEP_SECONDS="2", TWIN_PURGE_INTERVAL="0", EMAIL_BACKEND="file",
                   EMAIL_FILE_PATH=str(tmp_path / "mail"))
        ports = [free_port(), free_port()]
        commands = [[sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "twinsite.asgi:application"]
                    for port in ports] + [[sys.executable, "manage.py", "twin_worker", "--interval", "0.2"]]
        logs = [tmp_path / name for name in ("daphne-a.log", "daphne-b.log", "worker.log")]
        processes = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
                     for command, log in zip(commands, logs, strict=True)]
        try:
            for port, process, log in zip(ports, processes, logs, strict=False):
                deadline = time.monotonic() + 60
                while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(log.read_text())
                    time.sleep(0.2)
            yield {"a": f"127.0.0.1:{ports[0]}", "b": f"127.0.0.1:{ports[1]}", "model": model,
                   "mail": tmp_path / "mail", "logs": logs}
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=30)


def visitor(ip: str) -> tuple[str, dict[str, str]]:
    """A conversation and the browser session that owns it, as the chat page makes them."""
    conversation = conversation_create(visitor_ip=ip)
    store = SessionStore()
    store[SESSION_KEY] = str(conversation.pk)
    store.create()
    return str(conversation.pk), {"Cookie": f"sessionid={store.session_key}", "X-Forwarded-For": ip}


class Socket:
    """One visitor socket; events are kept in order and read with a cursor."""

    def __init__(self, host: str, conversation: str, headers: dict[str, str]) -> None:
        self.host, self.conversation, self.headers = host, conversation, headers
        self.events: list[dict] = []
        self.cursor = 0
        self.arrived = asyncio.Event()

    async def __aenter__(self) -> Socket:
        self.ws = await connect(f"ws://{self.host}/ws/chat/{self.conversation}/", origin=f"http://{self.host}",
                                additional_headers=self.headers, proxy=None, open_timeout=WAIT)
        self.reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc) -> None:
        self.reader.cancel()
        await self.ws.close()

    async def _read(self) -> None:
        async for frame in self.ws:
            self.events.append(json.loads(frame))
            self.arrived.set()

    async def ask(self, text: str) -> None:
        await self.ws.send(json.dumps({"type": "ask", "text": text}))

    async def next(self, kind: str, **fields: object) -> dict:
        """The next event of ``kind`` (with these fields) after the previous match."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            for index in range(self.cursor, len(self.events)):
                event = self.events[index]
                if event["type"] == kind and all(event.get(k) == v for k, v in fields.items()):
                    self.cursor = index + 1
                    return event
            self.arrived.clear()
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"no {kind} {fields} on {self.host}; got {self.events[self.cursor:]}")
            try:
                await asyncio.wait_for(self.arrived.wait(), remaining)
            except TimeoutError:
                pass


async def shared_turn_lock(fleet: dict, conversation: str, headers: dict) -> None:
    model = fleet["model"]
    model.add(Reply(chunks=sse_text(*[f"word{i} " for i in range(10)]), delay=0.3))  # about 3 s of streaming
    model.add(Reply(chunks=sse_text("The second answer.")))
    async with Socket(fleet["a"], conversation, headers) as a, Socket(fleet["b"], conversation, headers) as b:
        await a.ask("Tell me a long story?")
        await a.next("token")  # process A is streaming: it holds the conversation's turn lock
        await b.ask("What else has she built?")
        busy = await b.next("error")
        assert busy["code"] == "busy" and not busy["in_turn"]
        assert (await a.next("done"))["answer"].startswith("word0")
        await b.ask("What else has she built?")  # A's turn is over: B may run one
        assert (await b.next("done"))["answer"] == "The second answer."


async def shared_rate_limit(fleet: dict, conversation: str, headers: dict) -> None:
    for number in range(3):
        fleet["model"].add(Reply(chunks=sse_text(f"Answer {number}.")))
    async with Socket(fleet["a"], conversation, headers) as a, Socket(fleet["b"], conversation, headers) as b:
        for number, sock in enumerate((a, b, a)):  # TWIN_RATE_TURNS=3/10m, counted in Postgres
            await sock.ask(f"Question {number}?")
            assert (await sock.next("done"))["answer"] == f"Answer {number}."
        await b.ask("Question 3?")
        limited = await b.next("error")
        assert limited["code"] == "rate_limited" and limited["retry_after"] > 0


async def approval_pushed_across(fleet: dict, conversation: str, headers: dict) -> int:
    model = fleet["model"]
    model.add(Reply(chunks=sse_tool_call("draft_contact_message", {
        "visitor_name": "Tom", "visitor_email": "tom@example.com", "message": "Can we talk about a data platform?"})))
    model.add(Reply(chunks=sse_text("I've drafted it; Mira reviews it before it is sent.")))
    model.add(Reply(chunks=sse_text("Mira approved it: your message has been sent.")))
    async with Socket(fleet["a"], conversation, headers) as a, Socket(fleet["b"], conversation, headers) as b:
        await b.ask("Please pass a message to Mira: I'm Tom, tom@example.com")
        pending = await b.next("approval", status="pending")
        assert (await b.next("done"))["outcome"] == "approval_pending"
        async with httpx.AsyncClient(base_url=f"http://{fleet['a']}") as api:  # the owner, through process A
            decided = await api.post(f"/api/admin/approvals/{pending['approval_id']}/decide",
                                     json={"decision": "approve", "decided_by": "mira"},
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        assert decided.status_code == 200 and decided.json()["status"] == "approved"
        # The worker resumes the thread; both sockets get it, whichever process serves them.
        for sock in (a, b):
            assert (await sock.next("approval", status="approved"))["approval_id"] == pending["approval_id"]
            done = await sock.next("done")
            assert done["outcome"] == "approval_resolved" and "has been sent" in done["answer"]
    return pending["approval_id"]


def test_two_daphne_processes_and_the_worker_share_the_lock_the_limits_and_the_pushes(fleet):
    asyncio.run(shared_turn_lock(fleet, *visitor("10.0.0.1")))
    asyncio.run(shared_rate_limit(fleet, *visitor("10.0.0.2")))
    asyncio.run(approval_pushed_across(fleet, *visitor("10.0.0.3")))
    def contact_mails() -> list[str]:  # not the owner's notice of the request, if the worker sent one
        texts = [p.read_text() for p in fleet["mail"].iterdir()] if fleet["mail"].exists() else []
        return [t for t in texts if "Subject: Message from Tom via your digital twin" in t]

    deadline = time.monotonic() + 30
    while not contact_mails() and time.monotonic() < deadline:
        time.sleep(0.2)
    [mail] = contact_mails()
    assert "tom@example.com" in mail

"""Real processes for the fault tests: daphne and the worker on the test database (optionally
through a TCP proxy that can cut Postgres away), and a visitor's session and WebSocket."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.db import connection
from websockets.sync.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def twin_env(*, db_port: int | None = None, **overrides: str) -> dict:
    """The environment of a real process on the test database (``db_port``: through a proxy).
    One embedding model and no semantic screen (its exemplar bank takes seconds of CPU to embed
    in each new process; tests/guards covers it): these processes are here for their faults."""
    sd = connection.settings_dict
    port = db_port or sd["PORT"]
    return {**os.environ, "DATABASE_URL": f"postgresql://{sd['USER']}:{sd['PASSWORD']}@{sd['HOST']}:{port}/{sd['NAME']}",
            "DJANGO_SETTINGS_MODULE": "twinsite.settings", "TWIN_PROVIDER": "offline", "TWIN_EMBEDDERS": "e5",
            "TWIN_SEMANTIC_SCREEN": "false", **overrides}


def fake_provider_env(base_url: str) -> dict[str, str]:
    """A hosted provider that is the fake server on loopback (priced: reservations are made)."""
    return {"TWIN_PROVIDER": "gemini", "TWIN_MODEL": "gemini-3-flash-preview", "TWIN_BASE_URL": base_url,
            "TWIN_API_KEY": "test-key-0000", "TWIN_PROVIDER_BACKOFF": "0"}


class Daphne:
    """A daphne process serving the project, as `make run` starts it."""

    def __init__(self, env: dict, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "twinsite.asgi:application"],
            cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"daphne did not start:\n{log.read_text()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no cleanup of any kind
        self.process.wait(timeout=20)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def turns_finished(timeout: float = 60) -> None:
    """Wait until no turn of a live server holds its conversation's advisory lock: a turn whose
    client stopped reading goes on writing, and a test database flushed under it deadlocks."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                           "WHERE l.locktype = 'advisory' AND d.datname = current_database()")
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.2)


@pytest.fixture
def processes():
    """Every process a test starts is stopped afterwards, killed if need be."""
    started: list = []
    yield started
    for item in started:
        if isinstance(item, Daphne):
            item.stop()
        elif item.poll() is None:
            item.kill()
            item.wait(timeout=20)


def worker(env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "twin_worker", "--interval", "0.2"], cwd=ROOT,
                            env=env | {"TWIN_WORKER_SWEEP_SECONDS": "1"}, stdout=log.open("a"),
                            stderr=subprocess.STDOUT)


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], check=False, cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def session_cookie(*conversation_ids) -> str:
    """A browser session owning the conversations (the last one is current)."""
    from django.contrib.sessions.backends.db import SessionStore

    from chat.turns.admission import SESSION_KEY

    store = SessionStore()
    if conversation_ids:
        store[SESSION_KEY] = str(conversation_ids[-1])
    store.create()
    return f"sessionid={store.session_key}"


class Visitor:
    """A visitor's chat socket on a real server."""

    def __init__(self, server: Daphne, conversation_id, cookie: str, ip: str = "") -> None:
        headers = {"Cookie": cookie, **({"X-Forwarded-For": ip} if ip else {})}
        self.ws: ClientConnection = connect(f"ws://127.0.0.1:{server.port}/ws/chat/{conversation_id}/",
                                            origin=f"http://127.0.0.1:{server.port}", additional_headers=headers,
                                            proxy=None, open_timeout=20, max_size=2**24, legacy=True)

    def send(self, frame: dict) -> None:
        self.ws.send(json.dumps(frame))

    def event(self, timeout: float = 30) -> dict:
        return json.loads(self.ws.recv(timeout=timeout))

    def until(self, *kinds: str, timeout: float = 60) -> list[dict]:
        """Events up to the first of ``kinds`` (or an error outside a turn), inclusive."""
        events: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            events.append(self.event(max(deadline - time.monotonic(), 0.1)))
            if events[-1]["type"] in kinds or (events[-1]["type"] == "error" and not events[-1].get("in_turn")):
                return events

    def close(self) -> None:
        self.ws.close()


class TcpProxy:
    """Loopback TCP between the server and Postgres: ``cut()`` drops every connection and refuses
    new ones, as a stopped or unreachable database does; ``restore()`` lets them through again."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.down = False
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()  # the peer sees the connection refused at once
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open |= {client, upstream}
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def cut(self) -> None:
        self.down = True
        with self._lock:
            dropping = list(self._open)
        for sock in dropping:
            self._drop(sock)

    def restore(self) -> None:
        self.down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.listener.close()

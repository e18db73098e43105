"""A local fake OpenAI-compatible server on loopback: real HTTP, scripted responses.

Replies are taken from the queue (``add``); when it is empty and the server has a ``brain`` (a
function from the request body to a Reply, e.g. ``tests.fakes.model_brain.OfflineBrain``), the
brain answers, so a whole eval run can go through the server."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    chunks: list[str] = field(default_factory=list)  # SSE text pieces, written one by one
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None  # drop the connection after this many chunks
    delay: float = 0.0  # seconds after each chunk
    wait: float = 0.0  # seconds before answering at all (a slow provider)


def sse_text(*pieces: str, finish: str = "stop", usage: dict | None = None) -> list[str]:
    """A well-formed OpenAI-style stream of ``pieces`` as separate network chunks."""
    def chunk(delta: dict, finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return "data: " + json.dumps({"choices": [choice]}) + "\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces]
    out.append(chunk({}, finish))
    out.append("data: " + json.dumps({"choices": [], "usage": usage or
                                      {"prompt_tokens": 10, "completion_tokens": len(pieces)}}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return out


class FakeOpenAI:
    def __init__(self, brain: Callable[[dict], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict] = []
        self.brain = brain
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body,
                                      "authorization": self.headers.get("Authorization")})
                reply = fake.replies.popleft() if fake.replies else fake.think(body)
                if reply.wait:
                    time.sleep(reply.wait)
                if reply.status != 200:
                    data = "".join(reply.chunks).encode()
                    self.send_response(reply.status)
                    for key, value in {"Content-Type": "application/json", **reply.headers}.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for number, piece in enumerate(reply.chunks, start=1):
                    data = piece.encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.cut_after is not None and number >= reply.cut_after:
                        self.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk
                        self.close_connection = True
                        return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the listen backlog: the load benchmark's fifty visitors connect at once
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def think(self, body: dict) -> Reply:
        if self.brain is None:
            return Reply(500, ['{"error": {"message": "no reply"}}'])
        try:
            return self.brain(body)
        except Exception as exc:  # a broken brain is a 500 the client reports, not a hung test
            return Reply(500, [json.dumps({"error": {"message": f"fake brain failed: {exc!r}"}})])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def add(self, reply: Reply) -> None:
        self.replies.append(reply)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

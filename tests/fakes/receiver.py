"""A webhook receiver on loopback for the owner's notices: records every POST (path, headers,
raw body) and answers with the statuses it is given, in order (then 200). ``hang_first`` keeps
the first request's answer back until ``release()``: the sender is mid-send for as long as the
test wants (to kill it there)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, statuses: list[int] | None = None, *, hang_first: bool = False) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[Received] = []
        self.arrived = threading.Event()
        self._hang = hang_first
        self._release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                hang, receiver._hang = receiver._hang, False
                receiver.arrived.set()
                if hang:
                    receiver._release.wait(60)
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                payload = b'{"ok": true}' if status < 300 else b"receiver is down"
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the sender was killed meanwhile
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Receiver:
        self._thread.start()
        return self

    def release(self) -> None:
        self._release.set()

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

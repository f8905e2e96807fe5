"""Real HTTP receivers for the webhook tests: a threading ``http.server`` on a free port of
127.0.0.1, started and stopped by the test, that records every request it gets and answers
as its ``mode`` says. Its signature check is written here from the documented scheme, apart
from catalog/notify/signing.py, so a mistake there cannot hide in both."""

import hashlib
import hmac
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    arrived: float = field(default_factory=time.monotonic)  # when the request was read


@dataclass
class Receiver:
    port: int
    mode: str = "ok"  # ok, slow, fail, redirect, huge, fail_then_ok, echo
    delay: float = 0.0  # seconds a "slow" receiver waits before answering
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0  # requests being answered now
    peak: int = 0  # the most answered at once

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def ids(self) -> list[str]:
        with self.lock:
            return [item.headers.get("Webhook-Id", "") for item in self.received]


def signature_ok(secret: str, headers: dict[str, str], body: bytes, window: int = 300) -> bool:
    """The documented check: v1=hex(HMAC-SHA256(secret, "<timestamp>.<body>")), the
    timestamp within ``window`` seconds of now."""
    timestamp = headers.get("Webhook-Timestamp", "")
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > window:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return hmac.compare_digest(headers.get("Webhook-Signature", ""), "v1=" + expected.hexdigest())


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with receiver.lock:
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                count = len(receiver.received)
                receiver.in_flight += 1
                receiver.peak = max(receiver.peak, receiver.in_flight)
            try:
                self._answer(count)
            finally:
                with receiver.lock:
                    receiver.in_flight -= 1

        def _answer(self, count: int) -> None:
            mode = receiver.mode
            if mode == "slow":
                time.sleep(receiver.delay)
            if mode == "echo":  # as many frameworks' 404 and login redirects do
                self.send_response(302 if count % 2 else 404)
                self.send_header("Location", f"https://login.example.com/?next={self.path}")
                answer = f"Cannot POST {self.path}".encode()
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                return
            if mode == "redirect" and self.path == "/hook":
                self.send_response(307)
                self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            failing = mode == "fail" or (mode == "fail_then_ok" and count == 1)
            answer = b"x" * (1 << 20) if mode == "huge" else b'{"ok": true}'
            try:
                self.send_response(500 if failing else 200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the sender gave up (slow) or stopped reading (huge)

    return Handler


@contextmanager
def receiver(mode: str = "ok", delay: float = 0.0, port: int = 0) -> Iterator[Receiver]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(Receiver(0)))
    state = Receiver(server.server_address[1], mode, delay)
    server.RequestHandlerClass = _handler(state)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()

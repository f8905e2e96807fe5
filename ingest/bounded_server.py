"""A small HTTP server bounded against whatever reaches its port (ADR 0177, ADR 0191).

The Kafka consumer's probe port (``ingest/kafka/health.py``) and the Celery worker's
metrics port (``ingest/metrics.py``) are served by it. Both listen on the pod's address,
so any pod that reaches the port can open connections to it: a thread per connection with
no timeout (``http.server``'s ``ThreadingHTTPServer``, prometheus_client's
``start_http_server``) gave each one a thread and its memory for as long as the client
kept it open.

Bounds: at most ``ACCEPTS_PER_SECOND`` connections taken a second, ``handlers`` threads
made once, at most ``waiting`` connections waiting for them in each of two lines (request
head arrived whole, answered first, or not yet) and a 503 at once past that, a request head
read within ``connection_seconds`` of the connection's acceptance and the answer taken
within as long of its first byte, one request a connection. The three in ``Limits`` are the
operator's, ``LINEAGE_BOUNDED_PORT_*`` (settings.LINEAGE_BOUNDED_PORT, ADR 0196)."""

import io
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import HTTPServer
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from django.conf import settings

logger = logging.getLogger(__name__)

ACCEPTS_PER_SECOND = 100  # connections taken from the kernel's queue, at most


@dataclass(frozen=True)
class Limits:
    """What a server holds. The kubelet sends a probe or two and Prometheus one scrape
    every 10-30 s, each a request head in one packet answered in milliseconds, so the
    defaults (4, 16, 2 s) are far above what they use; an operator whose scrapes are many
    or slow raises them (docs/deploy.md)."""

    handlers: int  # threads answering requests, made once
    waiting: int  # accepted connections waiting for a handler, per line; past that, a 503
    connection_seconds: float  # to send the request head (from acceptance), and to take the answer


def configured_limits() -> Limits:
    """The operator's limits: ``LINEAGE_BOUNDED_PORT_HANDLERS``, ``_WAITING`` and
    ``_CONNECTION_SECONDS``, checked when the settings load (config/settings/base.py)."""
    configured = settings.LINEAGE_BOUNDED_PORT
    return Limits(configured["HANDLERS"], configured["WAITING"], configured["CONNECTION_SECONDS"])


def busy_answer(content_type: str, body: bytes) -> bytes:
    """The whole 503 a full server sends, made once."""
    return (
        b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: %s\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
        % (content_type.encode(), len(body), body)
    )


class _DeadlineReader(io.RawIOBase):
    """The connection's bytes, each read waiting only until ``deadline``: a request head
    sent a byte a second (a slowloris) ends in ``TimeoutError`` at the deadline, where a
    socket timeout restarts with every byte."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        # Past the deadline, what has arrived is still read (a request that waited for a
        # handler with its head sent whole is answered); nothing more is waited for.
        self.sock.settimeout(max(0.0, self.deadline - time.monotonic()))
        try:
            return self.sock.recv_into(buffer)
        except BlockingIOError as error:  # settimeout(0): non-blocking, nothing there
            raise TimeoutError("the request head took too long") from error


class _DeadlineWriter(io.RawIOBase):
    """The answer's bytes, all sent within ``seconds`` of the first: a client that reads
    nothing holds a handler no longer than that."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self.sock = sock
        self.seconds = seconds
        self.deadline: float | None = None

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.deadline is None:
            self.deadline = time.monotonic() + self.seconds
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer took too long to be taken")
        self.sock.settimeout(left)  # sendall's timeout bounds all of it
        self.sock.sendall(data)
        return len(data)


class DeadlineHandler:
    """Mixed in before a ``BaseHTTPRequestHandler``: the handler is made with the
    connection's deadline and reads and writes through the deadline files above."""

    connection: socket.socket
    server: Any  # a BoundedServer
    rfile: Any
    wfile: Any

    def __init__(self, request: Any, client_address: Any, server: Any, deadline: float):
        self.deadline = deadline
        super().__init__(request, client_address, server)  # type: ignore[call-arg]

    def setup(self) -> None:
        super().setup()  # type: ignore[misc]
        self.rfile.close()  # the socket's own file, replaced by one with a deadline
        self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.deadline))
        self.wfile = _DeadlineWriter(self.connection, self.server.limits.connection_seconds)


class BoundedServer(HTTPServer):
    """An HTTP server taking at most ``ACCEPTS_PER_SECOND`` connections a second, with
    ``limits.handlers`` threads and at most ``limits.waiting`` connections in each line
    waiting for them; a connection past those is answered ``busy`` at once and closed. Its
    handler class takes the connection's deadline (``DeadlineHandler``). ``limits``: the
    configured ones unless given."""

    # The kernel's queue of connections not yet accepted (socketserver's default is 5):
    # past it, a connection waits for SYN retransmits (1 s, 3 s, ...) before it is even
    # accepted, so a burst would leave a scrape or a probe unanswered.
    request_queue_size = 64
    busy = busy_answer("text/plain; charset=utf-8", b"too many connections\n")

    def __init__(
        self, address: tuple[str, int], handler: Any, name: str, limits: Limits | None = None
    ) -> None:
        self.limits = limits or configured_limits()
        super().__init__(address, handler)
        # Two lines of waiting connections: those whose request head had arrived whole
        # when accepted (a probe, a scrape: one packet) are answered first; those still
        # sending theirs (a slowloris, or a client slower than the accepting thread) wait
        # behind them. Holding every place of one line leaves the other's open.
        self.whole: deque[tuple[socket.socket, Any, float]] = deque()
        self.partial: deque[tuple[socket.socket, Any, float]] = deque()
        self.arrived = threading.Condition()
        self.stopping = False
        self.handlers = [
            threading.Thread(target=self._handle, name=f"{name}-{n}", daemon=True)
            for n in range(self.limits.handlers)
        ]
        for thread in self.handlers:
            thread.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        accepted = time.monotonic()
        paced = accepted + 1 / ACCEPTS_PER_SECOND
        line = self.whole if head_arrived(request, paced) else self.partial
        with self.arrived:
            taken = len(line) < self.limits.waiting
            if taken:
                line.append((request, client_address, accepted + self.limits.connection_seconds))
                self.arrived.notify()
        if not taken:
            refuse(request, self.busy)
            self.shutdown_request(request)
        # Paced: every connection costs Python time under the GIL the process's own work
        # shares (the consumer's loop, the Celery worker's), answered or refused; past this
        # rate they wait in the kernel's queue, and past that the kernel drops them,
        # costing this process nothing.
        time.sleep(max(0.0, paced - time.monotonic()))

    def _next(self) -> tuple[socket.socket, Any, float] | None:
        with self.arrived:
            while not (self.whole or self.partial or self.stopping):
                self.arrived.wait()
            if self.whole:
                return self.whole.popleft()
            return self.partial.popleft() if self.partial else None

    def _handle(self) -> None:
        while (item := self._next()) is not None:
            request, client_address, deadline = item
            try:
                handler: Any = self.RequestHandlerClass  # a DeadlineHandler
                handler(request, client_address, self, deadline)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client gone before its answer (reset, timed out): nothing to print for it.
        logger.debug("bounded_server_error", exc_info=True)

    def shutdown(self, wait: float | None = None) -> None:
        """Stops accepting, lets the handlers finish what waits (each at most ``wait``, by
        default a connection's two deadlines), and closes the port."""
        if wait is None:
            wait = 2 * self.limits.connection_seconds
        super().shutdown()
        with self.arrived:
            self.stopping = True
            self.arrived.notify_all()
        for thread in self.handlers:
            thread.join(timeout=wait)
        self.server_close()


def head_arrived(request: socket.socket, until: float) -> bool:
    """Whether the connection's request head has arrived whole (looked at, not read). A
    client sends its head right after the handshake, so when nothing has arrived yet its
    first bytes are waited for until ``until``: the accepting thread's pacing, spent anyway.
    (A socket timeout, not ``select``, which refuses a descriptor past 1023.)"""
    try:
        request.settimeout(max(0.0, until - time.monotonic()))  # 0: nothing left to wait
        return b"\r\n\r\n" in request.recv(8192, socket.MSG_PEEK)
    except OSError:  # nothing in time (a timeout, or EAGAIN), or gone
        return False


def refuse(request: socket.socket, answer: bytes) -> None:
    """The 503 of a full server, never waited for: what the socket cannot take now is
    dropped, as is the request head already received (read so that closing does not
    reset the connection before the 503 is read)."""
    try:
        request.setblocking(False)
        request.send(answer)
        request.recv(4096)
    except OSError:
        pass


# --- A WSGI application behind the bounds ---------------------------------------------------


class BoundedWSGIServer(BoundedServer, WSGIServer):
    """wsgiref's server (the one prometheus_client's ``start_http_server`` makes) with the
    bounds: the same handler writes the same answer, one connection at a time per handler."""


class _WSGIHandler(DeadlineHandler, WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # a scrape every few seconds
        return


def serve_wsgi(
    app: Callable[..., Any], host: str, port: int, name: str, limits: Limits | None = None
) -> BoundedWSGIServer:
    """Serve ``app`` on ``host``:``port`` from a daemon thread, with ``limits`` (the
    configured ones unless given); returns the server (``server_address`` has the port).
    Raises ``OSError`` when the port cannot be opened."""
    server = BoundedWSGIServer((host, port), _WSGIHandler, name, limits)
    server.set_app(app)
    threading.Thread(target=server.serve_forever, name=name, daemon=True).start()
    return server

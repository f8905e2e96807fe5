"""The consumer process's own HTTP port (``LINEAGE_CONSUMER_PORT`` on
``LINEAGE_CONSUMER_HOST``): ``/healthz`` (alive), ``/readyz`` (the broker answers and
PostgreSQL answers) and ``/metrics`` (this process's counters; the lag and dead-letter
gauges are on the web pods' ``/metrics``).

Bounded against whatever reaches the port (ADR 0177): at most ``ACCEPTS_PER_SECOND``
connections taken a second, ``HANDLERS`` threads made once, at most ``WAITING``
connections waiting for them and a 503 at once past that, a request head
read and an answer written within ``CONNECTION_SECONDS`` each, and one readiness check at a
time, answered again for ``READINESS_SECONDS``: at most one PostgreSQL connection, whatever
the number of requests."""

import errno
import io
import json
import logging
import queue
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from django.db import DatabaseError, connection
from prometheus_client import generate_latest

from ingest.metrics import CONTENT_TYPE, process_registry

logger = logging.getLogger(__name__)


def readiness(ingest_consumer: Any) -> tuple[bool, dict[str, str]]:
    checks: dict[str, str] = {}
    try:
        # A metadata request: answered only when the consumer reaches a broker.
        ingest_consumer.consumer.list_topics(timeout=2)
        checks["kafka"] = "connected"
    except Exception as error:
        checks["kafka"] = f"unavailable: {type(error).__name__}"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except DatabaseError as error:
        checks["database"] = f"unavailable: {type(error).__name__}"
    finally:
        connection.close()  # one check at a time holds it (Readiness), none in between
    checks["partitions"] = str(len(ingest_consumer.assigned))
    ready = checks["kafka"] == "connected" and checks["database"] == "ok"
    return ready, checks


# The probe server's bounds (ADR 0177). The kubelet sends two probes and Prometheus one
# scrape, each a request head in one packet answered in microseconds (/readyz from
# READINESS_SECONDS' cache), so these are far above what legitimate callers use.
HANDLERS = 4  # threads answering requests, made once
WAITING = 16  # accepted connections waiting for a handler; past that, a 503 at once
CONNECTION_SECONDS = 2.0  # to send the request head (from its acceptance), and to take the answer
ACCEPTS_PER_SECOND = 100  # connections taken from the kernel's queue, at most
READINESS_SECONDS = 1.0  # a readiness result is answered again for this long
READINESS_WAIT_SECONDS = 3.0  # longest wait for the first check, run by another request

_BUSY_BODY = b'{"status": "unavailable", "checks": {"probes": "too many connections"}}'
BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


class Readiness:
    """``readiness`` run by one request at a time and answered again for
    ``READINESS_SECONDS``: however many ``/readyz`` arrive, at most one database
    connection and one broker metadata request at a time, and one of each a second."""

    def __init__(self, ingest_consumer: Any) -> None:
        self.ingest_consumer = ingest_consumer
        self.lock = threading.Lock()
        self.answer: tuple[bool, dict[str, str]] | None = None
        self.checked = 0.0

    def __call__(self) -> tuple[bool, dict[str, str]]:
        # While a check runs (the broker's answer or PostgreSQL's slow in coming), the one
        # before is answered at once: handlers are not held waiting for it.
        wait = READINESS_WAIT_SECONDS if self.answer is None else 0
        if not self.lock.acquire(timeout=wait):
            if self.answer is not None:
                return self.answer
            return False, {"readiness": "not checked yet: the first check is still running"}
        try:
            if self.answer is None or time.monotonic() - self.checked >= READINESS_SECONDS:
                self.answer = readiness(self.ingest_consumer)
                self.checked = time.monotonic()
            return self.answer
        finally:
            self.lock.release()


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
    """The answer's bytes, all sent within ``CONNECTION_SECONDS`` of the first: a client
    that reads nothing holds a handler no longer than that."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline: float | None = None

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if self.deadline is None:
            self.deadline = time.monotonic() + CONNECTION_SECONDS
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer took too long to be taken")
        self.sock.settimeout(left)  # sendall's timeout bounds all of it
        self.sock.sendall(data)
        return len(data)


class ProbeServer(HTTPServer):
    """An HTTP server taking at most ``ACCEPTS_PER_SECOND`` connections a second, with
    ``HANDLERS`` threads and at most ``WAITING`` connections waiting for them; a connection
    past those is answered 503 at once and closed. Each connection
    has ``CONNECTION_SECONDS`` to send its request head and as long to take the answer."""

    # The kernel's queue of connections not yet accepted: past it, a connection waits for
    # SYN retransmits (1 s, 3 s, ...) before it is even accepted, and refused then.
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler)
        self.waiting: queue.Queue[tuple[socket.socket, Any, float] | None] = queue.Queue(WAITING)
        self.handlers = [
            threading.Thread(target=self._handle, name=f"consumer-probe-{n}", daemon=True)
            for n in range(HANDLERS)
        ]
        for thread in self.handlers:
            thread.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        accepted = time.monotonic()
        try:
            self.waiting.put_nowait((request, client_address, accepted + CONNECTION_SECONDS))
        except queue.Full:
            refuse(request)
            self.shutdown_request(request)
        # Paced: every connection costs Python time under the GIL the consumer's loop
        # shares, answered or refused; past this rate they wait in the kernel's queue, and
        # past that the kernel drops them, costing this process nothing.
        time.sleep(max(0.0, accepted + 1 / ACCEPTS_PER_SECOND - time.monotonic()))

    def _handle(self) -> None:
        while (item := self.waiting.get()) is not None:
            request, client_address, deadline = item
            try:
                handler: Any = self.RequestHandlerClass  # serve()'s Handler takes the deadline
                handler(request, client_address, self, deadline)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client gone before its answer (reset, timed out): nothing to print for it.
        logger.debug("consumer_probe_error", exc_info=True)

    def shutdown(self) -> None:
        """Stops accepting, lets the handlers finish what waits, and closes the port."""
        super().shutdown()
        for _ in self.handlers:
            self.waiting.put(None)
        for thread in self.handlers:
            thread.join(timeout=2 * CONNECTION_SECONDS + READINESS_WAIT_SECONDS)
        self.server_close()


def refuse(request: socket.socket) -> None:
    """The 503 of a full server, never waited for: what the socket cannot take now is
    dropped, as is the request head already received (read so that closing does not
    reset the connection before the 503 is read)."""
    try:
        request.setblocking(False)
        request.send(BUSY)
        request.recv(4096)
    except OSError:
        pass


class CannotListen(Exception):
    """The probe server cannot open its port; the message names it and the setting that
    moves it."""


def serve(ingest_consumer: Any, port: int, host: str = "127.0.0.1") -> ProbeServer:
    """Start the probe server in a daemon thread; returns it (``server_address`` has the port).

    Raises ``CannotListen`` saying which address and which setting when the port is taken
    or the address is not this machine's."""
    ready_now = Readiness(ingest_consumer)

    class Handler(BaseHTTPRequestHandler):
        def __init__(self, request: Any, client_address: Any, server: Any, deadline: float):
            self.deadline = deadline
            super().__init__(request, client_address, server)

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # the socket's own file, replaced by one with a deadline
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.deadline))
            self.wfile = _DeadlineWriter(self.connection)  # type: ignore[assignment]

        def do_GET(self) -> None:
            if self.path == "/healthz":
                self._answer(200, "application/json", b'{"status": "ok"}')
            elif self.path == "/readyz":
                ready, checks = ready_now()
                body = {"status": "ok" if ready else "unavailable", "checks": checks}
                self._answer(200 if ready else 503, "application/json", json.dumps(body).encode())
            elif self.path == "/metrics":
                self._answer(200, CONTENT_TYPE, generate_latest(process_registry()))
            else:
                self._answer(404, "application/json", b'{"status": "not found"}')

        def _answer(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # probes every few seconds
            return

    try:
        server = ProbeServer((host, port), Handler)
    except OSError as error:
        raise CannotListen(cannot_listen(host, port, error)) from error
    threading.Thread(target=server.serve_forever, name="consumer-probes", daemon=True).start()
    logger.info("consumer_probes_serving port=%d", server.server_address[1])
    return server


def cannot_listen(host: str, port: int, error: OSError) -> str:
    """One line: what could not be opened, why, and which setting changes it."""
    where = f"the consumer's probe port {port} on {host}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"{where} is in use by another program: set LINEAGE_CONSUMER_PORT to a free port "
            "(0: no probe server)"
        )
    return (
        f"{where} cannot be opened ({error.strerror or error}): set LINEAGE_CONSUMER_HOST to "
        "an address of this machine, or LINEAGE_CONSUMER_PORT to another port (0: none)"
    )

"""The consumer process's own HTTP port (``LINEAGE_CONSUMER_PORT`` on
``LINEAGE_CONSUMER_HOST``): ``/healthz`` (alive), ``/readyz`` (the broker answers and
PostgreSQL answers) and ``/metrics`` (this process's counters; the lag and dead-letter
gauges are on the web pods' ``/metrics``).

Bounded against whatever reaches the port (ADR 0177): its connections by
``ingest.bounded_server`` (which serves the worker's metrics port too, ADR 0191), and one
readiness check at a time, answered again for ``READINESS_SECONDS``: at most one
PostgreSQL connection, whatever the number of requests."""

import errno
import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from django.db import DatabaseError, connection
from prometheus_client import generate_latest

from ingest.bounded_server import BoundedServer, DeadlineHandler, busy_answer
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


# The probe server's own bounds (ADR 0177); its connections' are ingest/bounded_server.py's.
READINESS_SECONDS = 1.0  # a readiness result is answered again for this long
READINESS_WAIT_SECONDS = 3.0  # longest wait for the first check, run by another request

BUSY = busy_answer(
    "application/json", b'{"status": "unavailable", "checks": {"probes": "too many connections"}}'
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


class ProbeServer(BoundedServer):
    """The bounded server, its 503 a JSON probe answer; shutting down waits for a
    readiness check a handler may be waiting on."""

    busy = BUSY

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler, "consumer-probe")

    def shutdown(self, wait: float | None = None) -> None:
        if wait is None:
            wait = 2 * self.limits.connection_seconds + READINESS_WAIT_SECONDS
        super().shutdown(wait)


class CannotListen(Exception):
    """The probe server cannot open its port; the message names it and the setting that
    moves it."""


def serve(ingest_consumer: Any, port: int, host: str = "127.0.0.1") -> ProbeServer:
    """Start the probe server in a daemon thread; returns it (``server_address`` has the port).

    Raises ``CannotListen`` saying which address and which setting when the port is taken
    or the address is not this machine's."""
    ready_now = Readiness(ingest_consumer)

    class Handler(DeadlineHandler, BaseHTTPRequestHandler):
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

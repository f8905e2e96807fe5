"""The consumer process's own HTTP port (``LINEAGE_CONSUMER_PORT`` on
``LINEAGE_CONSUMER_HOST``): ``/healthz`` (alive), ``/readyz`` (the broker answers and
PostgreSQL answers) and ``/metrics`` (this process's counters; the lag and dead-letter
gauges are on the web pods' ``/metrics``)."""

import errno
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
        connection.close()  # this thread's own connection, opened per probe
    checks["partitions"] = str(len(ingest_consumer.assigned))
    ready = checks["kafka"] == "connected" and checks["database"] == "ok"
    return ready, checks


class CannotListen(Exception):
    """The probe server cannot open its port; the message names it and the setting that
    moves it."""


def serve(ingest_consumer: Any, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Start the probe server in a daemon thread; returns it (``server_address`` has the port).

    Raises ``CannotListen`` saying which address and which setting when the port is taken
    or the address is not this machine's."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/healthz":
                self._answer(200, "application/json", b'{"status": "ok"}')
            elif self.path == "/readyz":
                ready, checks = readiness(ingest_consumer)
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
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as error:
        raise CannotListen(cannot_listen(host, port, error)) from error
    server.daemon_threads = True
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

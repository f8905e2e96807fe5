"""The shipped web server's connection places (ADR 0192): granian takes at most 512
connections a worker, whatever they send, and a probe queues behind them. A connection whose
request head has not arrived whole within ``WEB_HEADER_READ_SECONDS`` (2) is closed, so a
peer holding more half-sent heads than there are places no longer keeps the kubelet's
liveness probe (3 s) waiting past its timeout. Real processes, real sockets: the server as
the chart starts it (2 workers) and a client that holds connections as ADR 0188's audit did
(bench/port_hold.py)."""

import os
import resource
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.test_web_server import Server, started_server

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

# More than the 2 workers' 2 x 512 places: the rest wait in the kernel's listen queue, ahead
# of the probe.
HELD = 1100
HALF_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
LIVENESS_TIMEOUT = 3.0  # the chart's web.livenessProbe.timeoutSeconds


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    # The test holds HELD sockets and the server as many: a soft limit of 1,024 would stop
    # either before the places are full. The server inherits the raised limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * HELD
    assert hard == resource.RLIM_INFINITY or hard >= wanted, f"open files limited to {hard}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        with started_server(tmp_path) as running:
            yield running
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def half_sent(port: int) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection.sendall(HALF_HEAD)
    return connection


def probe(port: int) -> tuple[str, float]:
    """``/healthz`` on a new connection with the liveness probe's patience: the status line
    (or the error) and the seconds it took."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=LIVENESS_TIMEOUT) as c:
            c.settimeout(max(0.01, LIVENESS_TIMEOUT - (time.monotonic() - started)))
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = c.recv(64).split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as error:
        answer = type(error).__name__
    return answer, time.monotonic() - started


def closed_within(connection: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``connection``, or None if it was still open."""
    started = time.monotonic()
    connection.settimeout(0.1)
    while time.monotonic() - started < seconds:
        try:
            if connection.recv(1024) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - started
    return None


class Holder:
    """A peer that keeps HELD half-sent heads open, each sent a byte more now and then and
    opened again when the server closes it (bench/port_hold.py --reopen)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.held = [half_sent(port) for _ in range(HELD)]
        self.reopened = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.hold, daemon=True)

    def hold(self) -> None:
        while not self.stopping.wait(0.5):
            for index, connection in enumerate(self.held):
                try:
                    connection.setblocking(False)
                    gone = connection.recv(1, socket.MSG_PEEK) == b""
                except BlockingIOError:
                    gone = False
                except OSError:
                    gone = True
                if not gone:
                    try:
                        connection.send(b"X")
                        continue
                    except OSError:
                        pass
                connection.close()
                try:
                    self.held[index] = half_sent(self.port)
                    self.reopened += 1
                except OSError:
                    pass

    def __enter__(self) -> "Holder":
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join(30)
        for connection in self.held:
            connection.close()


def test_a_half_sent_head_is_closed_after_the_header_read_seconds(server: Server) -> None:
    connection = half_sent(server.port)
    with connection:
        closed = closed_within(connection, 10)
    # granian's own default kept it 30 s; the option makes it 2.
    assert closed is not None and 1.5 <= closed <= 4, closed


def test_the_liveness_probe_is_answered_while_a_peer_holds_more_than_every_place(
    server: Server,
) -> None:
    assert probe(server.port)[0] == "HTTP/1.1 200 OK"
    answers = []
    with Holder(server.port) as holder:
        for _ in range(4):
            answers.append(probe(server.port))
            time.sleep(1)
        reopened = holder.reopened
    # Every probe answered within the liveness probe's timeout while the places stayed taken
    # (the held connections were dropped and opened again, so the peer kept them full).
    assert [answer for answer, _ in answers] == ["HTTP/1.1 200 OK"] * 4, answers
    assert reopened >= HELD, reopened
    # And the server serves as before once the peer lets go.
    assert probe(server.port)[0] == "HTTP/1.1 200 OK"


def test_the_header_read_seconds_are_read_from_the_environment_within_granians_range() -> None:
    from django.core.exceptions import ImproperlyConfigured

    from tests.deploy.test_dockerfile import _server_options

    # Below the chart's liveness timeout by default; granian's own default is 30 s.
    assert _server_options()["http1_settings"].header_read_timeout == 2000
    settings = _server_options(WEB_HEADER_READ_SECONDS="5")["http1_settings"]
    assert settings.header_read_timeout == 5000
    for refused in ("0", "61", "2.5"):
        with pytest.raises(ImproperlyConfigured, match="WEB_HEADER_READ_SECONDS"):
            _server_options(WEB_HEADER_READ_SECONDS=refused)


def test_web_threads_below_two_are_refused_in_one_line_naming_the_setting() -> None:
    """One thread could not be both a body reader and the probes' (ADR 0197): the server
    refuses to start with it. (The body-read bound inside each process reads the same
    ``config.env.web_threads``; tests/deploy/test_web_server_body_reads.py serves with 4.)"""
    from django.core.exceptions import ImproperlyConfigured

    from tests.deploy.test_dockerfile import _server_options

    assert _server_options(WEB_THREADS="3")["blocking_threads"] == 3
    for refused in ("1", "0", "-4", "two"):
        with pytest.raises(ImproperlyConfigured, match="WEB_THREADS"):
            _server_options(WEB_THREADS=refused)


def test_web_threads_past_a_workers_places_are_refused_in_one_line_not_a_worker_traceback() -> None:
    """granian gives a worker at most its share of the 1,024-connection backlog at once, so
    more threads never run, and the body-read bound counted from them (``WEB_THREADS`` - 1
    places) would not bound; past what granian converts (2^64 and up) each worker died in
    a 40-line ``OverflowError`` traceback and the server stopped in a crash loop (ADR 0209).
    Refused at start by ``config.env.web_threads``, in one line naming the setting."""
    import subprocess
    import sys

    from django.core.exceptions import ImproperlyConfigured

    from tests.deploy.test_dockerfile import _server_options

    assert _server_options(WEB_THREADS="1024")["blocking_threads"] == 1024
    for refused in ("1025", str(2**63), str(2**64), str(10**23)):
        with pytest.raises(ImproperlyConfigured, match="WEB_THREADS"):
            _server_options(WEB_THREADS=refused)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.test", WEB_THREADS=str(2**64), WEB_WORKERS="1"
    )
    started = subprocess.run(
        [sys.executable, "-m", "config.server"],
        cwd=Path(__file__).resolve().parents[2],
        env={**env, "HOST": "127.0.0.1", "PORT": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0
    assert "Traceback" not in started.stderr + started.stdout, started.stderr[-2000:]
    assert started.stderr.strip().splitlines()[-1] == (
        f"config.server: WEB_THREADS='{2**64}' must be from 2 to 1024."
    )

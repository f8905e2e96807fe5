"""The shipped web server (``python -m config.server``, granian) as a real process on the test
database: production settings, the metrics directory, the access log, a graceful stop that
lets a request in flight finish, and a worker that dies being replaced (ADR 0052)."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
import psutil
import pytest
from django.db import connection

from ingest.models import Event
from ingest.services import create_token
from scripts.run_local import web_command
from tests.faults.processes import current_database_url, free_port, port_open, wait_for
from tests.ingest.helpers import LINEAGE, run_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
ROOT = Path(__file__).resolve().parents[2]
AGENT = 'probe "1" \\", "status": 500, {"x": 1}'  # would close the string in a format


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    metrics: Path

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def workers(self) -> set[int]:
        return {child.pid for child in psutil.Process(self.process.pid).children()}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with started_server(tmp_path) as running:
        yield running


@contextmanager
def started_server(tmp_path: Path, **settings: str) -> Iterator[Server]:
    """The shipped server on the test database, two workers; ``settings`` adds to its
    environment."""
    port = free_port()
    metrics = tmp_path / "prometheus"
    metrics.mkdir()
    (metrics / "counter_4242.db").write_bytes(b"left by an earlier server")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "web-server-test-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": current_database_url(),
        "REDIS_URL": "redis://127.0.0.1:1/0",  # no broker: the sweep catches up
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": "2",
        "WEB_THREADS": "2",
        "WEB_ACCESS_LOG": "true",
        "WEB_GRACEFUL_SECONDS": "10",
        "LOG_FORMAT": "json",
        **settings,
    }
    log = tmp_path / "web.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            web_command(), cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    running = Server(process, port, log, metrics)
    try:
        wait_for(lambda: port_open(port), 60, "the web server")
        wait_for(lambda: len(running.workers()) == 2, 30, "two workers")
        yield running
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        process.wait(timeout=30)
        connection.close()  # the server's connections are gone; ours must not be reused


def get(port: int, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    client.request("GET", path, headers=headers)
    response = client.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_it_serves_production_settings_on_a_fresh_metrics_directory(server: Server) -> None:
    status, headers, _ = get(server.port, "/healthz", **{"User-Agent": AGENT})
    assert status == 200
    assert headers["x-content-type-options"] == "nosniff"
    assert not (server.metrics / "counter_4242.db").exists()
    # The access line is JSON that a hostile User-Agent cannot break or forge.
    wait_for(lambda: any('"/healthz"' in line for line in server.lines()), 10, "access log")
    (line,) = [orjson.loads(x) for x in server.lines() if '"/healthz"' in x]
    assert line["method"] == "GET" and line["status"] == 200
    assert line["user_agent"] == AGENT
    assert isinstance(line["duration_ms"], float)
    # granian's own lines use the service's JSON format too.
    started = [x for x in server.lines() if "Started worker" in x]
    assert started and all(orjson.loads(x)["logger"].startswith("_granian") for x in started)
    refuses_a_content_length_that_is_no_number(server)


def refuses_a_content_length_that_is_no_number(server: Server) -> None:
    """docs/problems.md: granian refuses a request it cannot frame with a bare 400 before
    the application. Handed to Django, ``Content-Length: abc`` was a 500 (its ``body``
    converts the header unguarded): the server's refusal is what keeps it a 4xx. Checked
    on the first test's server rather than a server of its own (a start costs seconds)."""
    secret = create_token("framing", "ingest")[1]
    body = orjson.dumps(run_event())
    for declared in (b"abc", b"-1", b"1e3"):
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as raw:
            raw.sendall(
                b"POST " + LINEAGE.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Connection: close\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + secret.encode() + b"\r\n"
                b"Content-Length: " + declared + b"\r\n\r\n" + body
            )
            answer = raw.makefile("rb").readline()
        assert answer.startswith(b"HTTP/1.1 400 "), (declared, answer)
    assert not Event.objects.exists()


def test_sigterm_lets_a_request_in_flight_finish(server: Server) -> None:
    token = create_token("graceful", "ingest")[1]
    body = orjson.dumps(run_event())
    half = len(body) // 2
    head = (
        f"POST {LINEAGE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head + body[:half])
        time.sleep(1)  # the view is reading the body
        server.process.send_signal(signal.SIGTERM)
        time.sleep(1)
        sock.sendall(body[half:])
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 201, response.read()
        stored = orjson.loads(response.read())["id"]
    assert server.process.wait(timeout=30) == 0
    assert Event.objects.get(id=stored).payload == orjson.loads(body)
    assert not port_open(server.port)


def test_a_worker_that_dies_is_replaced(server: Server) -> None:
    before = server.workers()
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    wait_for(lambda: len(server.workers() - before) == 1, 30, "a new worker")
    assert victim not in server.workers()
    for _ in range(6):  # both workers answer (the kernel spreads connections)
        assert get(server.port, "/healthz")[0] == 200
    assert server.process.poll() is None


def test_the_workers_end_with_a_main_process_that_was_killed(server: Server) -> None:
    """SIGKILL gives the main process no chance to stop its workers: they must not live on
    serving the port and holding database connections."""
    workers = server.workers()
    server.process.kill()
    server.process.wait(timeout=30)

    def all_gone() -> bool:
        return not any(psutil.pid_exists(pid) and _alive(pid) for pid in workers)

    wait_for(all_gone, 30, "the workers to end")
    # A worker's main thread shows as a zombie while its other threads (granian's runtime)
    # are still exiting with the socket open: the port closes a moment later.
    wait_for(lambda: not port_open(server.port), 10, "the port to close")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# A main process as granian's: its SIGTERM handler only sets a flag in its server object. The
# worker it forks sleeps where a real one would still be starting (logging, the application,
# its own handlers): the main process's handler is still the worker's own.
MAIN_THAT_FORKS = """
import os, signal, sys, time
from config.server import die_with_the_main_process

die_with_the_main_process()
flags = []
for name in (signal.SIGTERM, signal.SIGINT):
    signal.signal(name, lambda *_: flags.append(1))
worker = os.fork()
if worker == 0:
    time.sleep(120)
    os._exit(0)
print(worker, flush=True)
time.sleep(120)
"""


def test_a_worker_still_starting_ends_with_a_main_process_that_was_killed() -> None:
    """issue 29 item 7: a worker whose main process was SIGKILLed before the worker had its
    own signal handlers lived on (the parent-death SIGTERM reached the main process's handler,
    inherited with the fork, which does nothing in a worker)."""
    main = subprocess.Popen(
        [sys.executable, "-c", MAIN_THAT_FORKS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert main.stdout is not None
    worker = int(main.stdout.readline())
    try:
        assert _alive(worker)
        main.kill()
        main.wait(timeout=30)
        wait_for(lambda: not _alive(worker), 15, "the worker to end with its main process")
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_worker_that_dies_again_within_seconds_stops_the_server(server: Server) -> None:
    """docs/deploy.md: a worker that dies is replaced; one that dies again within seconds
    stops the server, so the pod restarts and the failure shows (a crash loop is not hidden
    behind a server that keeps replacing workers)."""
    before = server.workers()
    os.kill(min(before), signal.SIGKILL)
    wait_for(lambda: len(server.workers() - before) == 1, 30, "a new worker")
    (replacement,) = server.workers() - before
    os.kill(replacement, signal.SIGKILL)  # the replacement dies at once too
    server.process.wait(timeout=30)
    assert any("crash loop" in line for line in server.lines()), server.lines()[-5:]
    wait_for(lambda: not port_open(server.port), 10, "the port to close")


def test_a_request_that_outlasts_the_grace_period_does_not_hold_the_server(
    server: Server,
) -> None:
    """docs/deploy.md: on SIGTERM requests in flight finish, *then* the workers are killed:
    a client that never finishes its request keeps the server at most WEB_GRACEFUL_SECONDS
    (10 here), so the pod ends before Kubernetes' grace period (the chart sets this to it
    minus 5) and its own SIGKILL."""
    token = create_token("stuck", "ingest")[1]
    body = orjson.dumps(run_event())
    head = (
        f"POST {LINEAGE} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(head + body[: len(body) // 2])  # and never the rest
        time.sleep(1)  # the view is reading the body
        stopped = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        took = time.monotonic() - stopped
    assert 5 < took < 10 + 5, took  # it waited for the request, then not much longer
    assert not Event.objects.exists()


def test_a_worker_over_web_max_rss_is_replaced_the_new_one_first(tmp_path: Path) -> None:
    """docs/deploy.md: ``WEB_MAX_RSS_MIB``: a worker that grows past it is replaced, the new
    one first. At 1 MiB every worker is past it when granian first samples their memory
    (``WEB_RSS_SAMPLE_SECONDS`` after the start: 2 s here instead of 30 s of waiting, the
    same check and replacement): a replacement must start while the worker it replaces
    still runs, and the server must go on serving."""
    with started_server(tmp_path, WEB_MAX_RSS_MIB="1", WEB_RSS_SAMPLE_SECONDS="2") as server:
        first = server.workers()
        overlapped: list[set[int]] = []

        def a_new_one_beside_the_old_ones() -> bool:
            now = server.workers()
            if now - first and first <= now:
                overlapped.append(now)
            return bool(overlapped)

        wait_for(a_new_one_beside_the_old_ones, 60, "a worker started beside the old two", 0.05)
        wait_for(lambda: not first <= server.workers(), 30, "an old worker to stop")
        assert server.process.poll() is None
        assert get(server.port, "/healthz")[0] == 200
        assert any("RSS over threshold" in line for line in server.lines()), server.lines()[-5:]


def test_sighup_replaces_every_worker_and_the_server_serves_on(server: Server) -> None:
    """docs/deploy.md: granian replaces workers on SIGHUP too (one after the other, each new
    one first)."""
    before = server.workers()
    server.process.send_signal(signal.SIGHUP)
    wait_for(lambda: not (server.workers() & before), 60, "both workers to be replaced")
    wait_for(lambda: len(server.workers()) == 2, 30, "two workers again")
    assert server.process.poll() is None
    for _ in range(4):
        assert get(server.port, "/healthz")[0] == 200

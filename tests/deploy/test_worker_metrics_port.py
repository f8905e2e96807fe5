"""The Celery worker's metrics port (``metrics.workerPort``) under a flood (ADR 0191).

prometheus_client's ``start_http_server`` gave each connection a thread of its own and
never timed one out: a client holding connections that each sent part of a request head
grew the worker's main process by a thread and about 26 KB a connection, for as long as it
liked (ADR 0188's audit). The bounded server answers Prometheus as it did, byte for byte."""

import contextlib
import gzip
import http.client
import socket
import threading
import time
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from ingest import metrics
from ingest.bounded_server import configured_limits
from tests.deploy.rendering import render
from tests.faults.processes import metrics_worker, wait_for

HELD = 200  # connections kept open at once, each re-opened when the server closes it
FLOOD_SECONDS = 10.0
PROBE_TIMEOUT = 5.0  # the worker's livenessProbe timeoutSeconds (worker-deployment.yaml)

# The defaults: the worker started below sets no LINEAGE_BOUNDED_PORT_*.
CONNECTION_SECONDS = configured_limits().connection_seconds


def scrape(port: int) -> tuple[int, str, bytes] | None:
    """Status, content type and body of ``GET /metrics``; None when not answered in time."""
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)
    try:
        client.request("GET", "/metrics")
        answer = client.getresponse()
        return answer.status, answer.getheader("Content-Type", ""), answer.read()
    except OSError:
        return None
    finally:
        client.close()


def threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("Threads:")).split()[1])


class Flood:
    """``HELD`` connections to ``port``, each sent a partial request head and a byte more
    every quarter second, a new one opened for each the server closes; records how long
    each was kept open."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.held: dict[socket.socket, float] = {}
        self.lifetimes: list[float] = []
        self.opened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        while not self.stop.is_set():
            while len(self.held) < HELD and not self.stop.is_set():
                try:
                    each = socket.create_connection(("127.0.0.1", self.port), timeout=1)
                    each.sendall(b"GET /metrics HTTP/1.1\r\nHost: worker\r\n")
                except OSError:  # the kernel's queue full: tried again next round
                    break
                each.setblocking(False)
                self.held[each] = time.monotonic()
                self.opened += 1
            for each in list(self.held):
                if self.closed(each):
                    self.lifetimes.append(time.monotonic() - self.held.pop(each))
                    each.close()
            self.stop.wait(0.25)

    @staticmethod
    def closed(each: socket.socket) -> bool:
        try:
            while each.recv(4096):  # a 503 of a full server, before it closes
                pass
            return True
        except BlockingIOError:
            with contextlib.suppress(OSError):
                each.send(b"X")
            return False
        except OSError:
            return True

    def longest_open(self) -> float:
        now = time.monotonic()
        return max([*self.lifetimes, *(now - opened for opened in self.held.values())])

    def __enter__(self) -> "Flood":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        for each in self.held:
            each.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_a_flooded_worker_metrics_port_holds_no_thread_a_connection_and_answers_scrapes(
    tmp_path: Path,
) -> None:
    """A real worker (its main process serves the port, as in the chart), HELD connections
    held open by a slowloris for FLOOD_SECONDS, and Prometheus scraping meanwhile."""
    port = metrics_port()
    service = metrics_worker(tmp_path, port)
    assert service.process is not None
    pid = service.process.pid
    try:
        wait_for(lambda: answered(port), 60, "the worker's metrics")
        before = most = threads(pid)
        scrapes: list[tuple[int, str, bytes] | None] = []
        with Flood(port) as flood:
            began = time.monotonic()
            while time.monotonic() - began < FLOOD_SECONDS:
                scrapes.append(scrape(port))
                most = max(most, threads(pid))
                time.sleep(0.5)
            longest = flood.longest_open()
        statuses = [each[0] if each else None for each in scrapes]
        print(
            f"{flood.opened} connections opened ({HELD} at once), the longest open "
            f"{longest:.1f} s; threads {before} before, at most {most}; scrapes {statuses}"
        )
        assert most <= before + 2, "a thread a held connection"
        assert longest < CONNECTION_SECONDS + 3, "held connections were never closed"
        assert None not in statuses, "a scrape went unanswered within the probe's timeout"
        assert statuses.count(200) >= 0.8 * len(statuses)
        for status, content_type, body in filter(None, scrapes):
            if status == 200:
                assert content_type.startswith("text/plain; version=0.0.4")
                list(text_string_to_metric_families(body.decode()))
        assert answered(port)
    finally:
        service.stop()
    output = service.output()
    assert "Traceback" not in output, output[-3000:]


def test_the_liveness_probe_waits_longer_than_a_held_connection_can_delay_it() -> None:
    """A probe's head arrives whole, so it waits at most for one handler to give up on a
    connection still sending its head: CONNECTION_SECONDS, and then is answered."""
    deployment = render("default").named("Deployment", "-worker")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["livenessProbe"]["timeoutSeconds"] >= 2 * CONNECTION_SECONDS


def metrics_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answered(port: int) -> bool:
    result = scrape(port)
    return result is not None and result[0] == 200


HEADS = {
    "plain": b"GET /metrics HTTP/1.1\r\nHost: worker\r\n\r\n",
    # What Prometheus 2.x and 3.x send: OpenMetrics preferred, gzip accepted.
    "prometheus": b"GET /metrics HTTP/1.1\r\nHost: worker\r\nAccept: application/openmetrics"
    b"-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;"
    b"version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n\r\n",
    "utf8": b"GET /metrics HTTP/1.1\r\nAccept: text/plain;version=1.0.0;escaping=allow-utf-8"
    b"\r\n\r\n",
    "one name": b"GET /metrics?name[]=lineage_celery_task_failures_total HTTP/1.0\r\n\r\n",
    "favicon": b"GET /favicon.ico HTTP/1.0\r\n\r\n",
    "post": b"POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n",
    "options": b"OPTIONS /metrics HTTP/1.0\r\n\r\n",
    "http/0.9": b"GET /metrics\r\n\r\n",
}


def raw_answer(port: int, head: bytes) -> bytes:
    """The whole answer as sent, but for the second it was sent: its Date header left out,
    a gzip body unzipped (gzip's header holds the time it was made)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        client.sendall(head)
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    lines, _, body = answer.partition(b"\r\n\r\n")
    if b"\r\nContent-Encoding: gzip" in lines:
        body = b"(unzipped) " + gzip.decompress(body)
    kept = [line for line in lines.split(b"\r\n") if not line.startswith(b"Date:")]
    return b"\r\n".join(kept) + b"\r\n\r\n" + body


def test_the_bounded_server_answers_what_start_http_server_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prometheus scrapes what it scraped: the same status lines, headers and bodies, for
    its content negotiation, gzip, a ``name[]`` filter and the other methods."""
    registry = CollectorRegistry()
    failures = Counter("lineage_celery_task_failures", "Tasks.", ["task"], registry=registry)
    failures.labels('derive "quoted" \\ ü').inc(3)
    latency = Histogram("lineage_seconds", "Time.", ["route"], registry=registry)
    latency.labels("api/v1/lineage").observe(0.2)
    monkeypatch.setattr(metrics, "process_registry", lambda: registry)
    bounded = metrics.serve_worker_metrics(0, "127.0.0.1")
    former, _ = start_http_server(0, "127.0.0.1", registry=registry)
    try:
        for name, head in HEADS.items():
            ours = raw_answer(bounded.server_address[1], head)
            theirs = raw_answer(former.server_address[1], head)
            assert ours == theirs, name
        gzipped = raw_answer(bounded.server_address[1], HEADS["prometheus"])
        assert b"(unzipped) # HELP lineage_celery_task_failures Tasks." in gzipped
    finally:
        bounded.shutdown()
        former.shutdown()
        former.server_close()

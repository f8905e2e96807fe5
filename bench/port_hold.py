"""Whether a client that holds connections open stops a pod's probes (ADR 0188's audit).

Starts one of the chart's listening servers on a free port of 127.0.0.1, as the chart runs
it: ``web`` (``python -m config.server``, granian with the chart's 2 workers x 8 threads,
development settings) or ``worker-metrics`` (``ingest.metrics.serve_worker_metrics``, what a
Celery worker's main process serves ``metrics.workerPort`` with, in multiprocess mode as
the chart sets it); ``prometheus-client`` is what it was before ADR 0191,
prometheus_client's ``start_http_server`` on the same registry. Then opens
--connections connections that each send a partial request head and one byte more every
5 s (a slowloris: nothing but what any pod that reaches the port can send), and every 5 s
asks ``--path`` on a new connection with the liveness probe's patience (--probe-timeout).
Prints, each time, how many held connections the server has not closed, the probe's status
line (or its timeout) and time, and the threads and RSS of the serving process.

``--slow-body`` (web only, ADR 0197) holds request bodies instead of heads: each connection
sends a whole request head with ``Content-Length: 100000`` and then one byte of body every
5 s, as a producer on a slow link would. ``anonymous`` and ``authenticated`` POST to
``/api/v1/lineage`` without and with an ingest token, ``admin`` posts a form to
``/admin/login/`` (anonymous by nature). The server then runs on ``--database-url`` (made
anew and migrated, production settings), and each round also POSTs one event with a token of
its own on a new connection (another producer) beside the probe.

Usage: .venv/bin/python -m bench.port_hold --server web --connections 1030 [--seconds 40]
       [--reopen] [--probe-timeout 3]
       .venv/bin/python -m bench.port_hold --slow-body authenticated --connections 24
       --database-url postgres://postgres@127.0.0.1:5432/lc_port_hold [--threads 8]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.common import ROOT, free_port, migrated_database, new_token

# The worker's metrics server, in a process of its own (the Celery main process serves it
# from a thread of its own likewise), or what served it before ADR 0191.
METRICS = (
    "import sys, time, django\n"
    "django.setup()\n"
    "from ingest.metrics import process_registry, serve_worker_metrics\n"
    "if sys.argv[2] == 'worker-metrics':\n"
    "    serve_worker_metrics(int(sys.argv[1]), '127.0.0.1')\n"
    "else:\n"
    "    from prometheus_client import start_http_server\n"
    "    start_http_server(int(sys.argv[1]), '127.0.0.1', registry=process_registry())\n"
    "time.sleep(3600)\n"
)
METRICS_SERVERS = ("worker-metrics", "prometheus-client")


# The slow body's declared length: any length above what has arrived keeps the read waiting.
SLOW_LENGTH = 100_000
EVENT = (
    b'{"eventType":"START","eventTime":"2026-12-07T10:00:00.000Z","run":{"runId":'
    b'"%s"},"job":{"namespace":"bench","name":"port_hold"},"inputs":[],"outputs":[],'
    b'"producer":"https://example.com/bench","schemaURL":'
    b'"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}'
)


def slow_head(mode: str, token: str) -> bytes:
    """A whole request head announcing ``SLOW_LENGTH`` bytes of body (none sent yet)."""
    if mode == "admin":
        target, kind, auth = "/admin/login/", "application/x-www-form-urlencoded", ""
    else:
        target, kind = "/api/v1/lineage", "application/json"
        auth = f"Authorization: Bearer {token}\r\n" if mode == "authenticated" else ""
    return (
        f"POST {target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {kind}\r\n{auth}"
        f"Content-Length: {SLOW_LENGTH}\r\n\r\n"
    ).encode()


def start(
    server: str, port: int, multiprocess: str, settings: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    if server in METRICS_SERVERS:
        command = [sys.executable, "-c", METRICS, str(port), server]
        env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="config.settings.development",
            PROMETHEUS_MULTIPROC_DIR=multiprocess,
        )
    else:
        command = [sys.executable, "-m", "config.server"]
        env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="config.settings.development",
            HOST="127.0.0.1",
            PORT=str(port),
            WEB_WORKERS="2",
            WEB_THREADS="8",
        )
        env.update(settings or {})
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            time.sleep(1)  # granian's workers start after its socket listens
            return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{server} did not listen on {port} within 60 s")


def serving_pid(process: subprocess.Popen[bytes], server: str) -> int:
    """The process that answers: granian's first worker, or the metrics process itself."""
    if server in METRICS_SERVERS:
        return process.pid
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    return int(children[0]) if children else process.pid


def threads_and_rss(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status)
    return f"threads={fields['Threads'].strip()} rss={fields['VmRSS'].strip()}"


def probe(port: int, path: str, timeout: float) -> str:
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.settimeout(timeout - (time.monotonic() - started))
            head = f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            connection.sendall(head.encode())
            answer = connection.recv(64).split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as error:
        answer = type(error).__name__
    return f"{answer} in {time.monotonic() - started:.3f} s"


def produce(port: int, token: str, timeout: float) -> str:
    """Another producer: one event POSTed on a new connection, its status line and time."""
    started = time.monotonic()
    body = EVENT % str(uuid.uuid4()).encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.settimeout(timeout)
            connection.sendall(
                b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                b"Content-Type: application/json\r\nAuthorization: Bearer "
                + token.encode()
                + b"\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            answer = connection.recv(64).split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError as error:
        answer = type(error).__name__
    return f"{answer} in {time.monotonic() - started:.3f} s"


def still_open(held: list[socket.socket]) -> list[socket.socket]:
    """The held connections the server has not closed (or answered), each sent one more
    byte."""
    kept = []
    for connection in held:
        try:
            if connection.recv(1, socket.MSG_PEEK) in (b"", b"H"):
                continue  # closed by the server, or answered (a slow body refused)
        except BlockingIOError:
            pass
        except OSError:
            continue
        try:
            connection.send(b"X")
        except OSError:
            continue
        kept.append(connection)
    return kept


def opened(port: int, count: int, head: bytes) -> list[socket.socket]:
    """``count`` new connections, each sent ``head`` (a partial request head, or a whole
    one whose body is still to come)."""
    held = []
    for _ in range(count):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            connection.sendall(head)
        except OSError:  # not taken from a full listen queue in 10 s, or refused at once
            continue
        connection.setblocking(False)
        held.append(connection)
        time.sleep(0.002)  # a socketserver's listen queue is 5: do not overflow it
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=["web", *METRICS_SERVERS], default="web")
    parser.add_argument("--connections", type=int, default=1030)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--path", default="")
    parser.add_argument("--probe-timeout", type=float, default=5.0)
    # Open a new connection for each one the server closed, as a client that means it would.
    parser.add_argument("--reopen", action="store_true")
    parser.add_argument("--slow-body", choices=["anonymous", "authenticated", "admin"])
    parser.add_argument("--database-url", help="--slow-body's database, made anew")
    parser.add_argument("--threads", type=int, default=8, help="WEB_THREADS (web)")
    args = parser.parse_args()
    path = args.path or ("/healthz" if args.server == "web" else "/metrics")
    port = free_port()
    settings = {"WEB_THREADS": str(args.threads)}
    head = b"GET / HTTP/1.1\r\nHost: localhost\r\n"
    producer = ""
    if args.slow_body:
        if args.server != "web" or not args.database_url:
            raise SystemExit("--slow-body needs --server web and --database-url")
        settings.update(migrated_database(args.database_url), WEB_THREADS=str(args.threads))
        holder, producer = new_token(settings, "ingest", "holder"), new_token(settings, "ingest")
        head = slow_head(args.slow_body, holder)
    multiprocess = tempfile.TemporaryDirectory(prefix="port-hold-metrics-")
    process = start(args.server, port, multiprocess.name, settings)
    try:
        pid = serving_pid(process, args.server)
        first = probe(port, path, args.probe_timeout)
        print(f"{args.server} on {port}: {first}; {threads_and_rss(pid)}")
        held = opened(port, args.connections, head)
        began = time.monotonic()
        while time.monotonic() - began < args.seconds:
            held = still_open(held)
            if args.reopen:
                held += opened(port, args.connections - len(held), head)
            produced = f"  producer: {produce(port, producer, args.probe_timeout)}"
            print(
                f"t={time.monotonic() - began:5.1f} s  held open: {len(held):5d}  "
                f"probe: {probe(port, path, args.probe_timeout)}"
                f"{produced if producer else ''}  {threads_and_rss(pid)}",
                flush=True,
            )
            time.sleep(5)
    finally:
        process.terminate()
        process.wait(30)
        multiprocess.cleanup()


if __name__ == "__main__":
    main()

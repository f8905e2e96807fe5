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

Usage: .venv/bin/python -m bench.port_hold --server web --connections 1030 [--seconds 40]
       [--reopen] [--probe-timeout 3]
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, free_port

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


def start(server: str, port: int, multiprocess: str) -> subprocess.Popen[bytes]:
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


def still_open(held: list[socket.socket]) -> list[socket.socket]:
    """The held connections the server has not closed, each sent one more byte."""
    kept = []
    for connection in held:
        try:
            if connection.recv(1, socket.MSG_PEEK) == b"":
                continue  # closed by the server
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


def opened(port: int, count: int) -> list[socket.socket]:
    """``count`` new connections, each sent a partial request head."""
    held = []
    for _ in range(count):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            connection.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
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
    args = parser.parse_args()
    path = args.path or ("/healthz" if args.server == "web" else "/metrics")
    port = free_port()
    multiprocess = tempfile.TemporaryDirectory(prefix="port-hold-metrics-")
    process = start(args.server, port, multiprocess.name)
    try:
        pid = serving_pid(process, args.server)
        first = probe(port, path, args.probe_timeout)
        print(f"{args.server} on {port}: {first}; {threads_and_rss(pid)}")
        held = opened(port, args.connections)
        began = time.monotonic()
        while time.monotonic() - began < args.seconds:
            held = still_open(held)
            if args.reopen:
                held += opened(port, args.connections - len(held))
            print(
                f"t={time.monotonic() - began:5.1f} s  held open: {len(held):5d}  "
                f"probe: {probe(port, path, args.probe_timeout)}  {threads_and_rss(pid)}",
                flush=True,
            )
            time.sleep(5)
    finally:
        process.terminate()
        process.wait(30)
        multiprocess.cleanup()


if __name__ == "__main__":
    main()

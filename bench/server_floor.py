"""The fixed cost of a request in the shipped web server, beside a bare round trip
(issue 42 items 1 and 2, ADR 0132).

Starts the shipped server (``python -m config.server``, bench.common.running_server) on a
store bench/read.py built, once per variant and round, variants alternating, and sends
sequential keep-alive GETs, each followed by its bare SQL on one psycopg connection:

  404     an authenticated GET of a dataset that does not exist (the cheapest read that
          authenticates, routes and answers; its bare is ``SELECT 1``)
  detail  GET /api/v1/datasets/<random>, beside bench/bare_reads.py's bare detail
  runs    GET /api/v1/runs?cursor=<deep>&limit=50, beside its bare keyset page
  marquez GET /marquez/api/v1/lineage?depth=5&nodeId=<a random dataset>, beside the bare
          Marquez walk (``--marquez``: bench/read.py's store names; ADR 0140)

Printed per read: p50 and p95 (ms) of the request and of its bare SQL, the CPU of every
thread of the server's workers per request (µs, from their schedstat) and their context
switches per request; per variant the workers' resident memory after the reads.

A variant is ``LABEL`` or ``LABEL:DIR`` (serve the code checked out at DIR, e.g. main's
``git archive``, with this virtualenv) followed by ``NAME=VALUE`` settings for the
server's environment (``--variant 'threads4 WEB_THREADS=4'``), in turn, the order
reversed every other round. ``--trivial`` adds, per
round, granian with config/server.py's options (this checkout's, the variant's settings)
serving a WSGI application that answers 29 bytes and does nothing else: granian's own floor
under the shipped settings (``FLOOR_APP=trivial_iterable``: the answer as an iterable with
``close()``, as Django gives it).
``--rss-requests N`` sends N more 404s per variant and prints the workers' memory before
and after them (a larger collector threshold keeps more garbage).

Usage: .venv/bin/python bench/server_floor.py --database URL [--requests 300]
       [--rounds 2] [--variant 'LABEL[:DIR] [NAME=VALUE ...]' ...] [--trivial]
       [--rss-requests 10000]
"""

import argparse
import http.client
import random
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.common import (
    BIN,
    bench_env,
    free_port,
    new_token,
    percentile,
    running_server,
    server_workers,
    wait_for_port,
    worker_switches,
)
from bench.read import against_bare, cursor_at

ROOT = Path(__file__).resolve().parent.parent
MISSING = 2_000_000_000  # no dataset has this id: the read answers 404

# granian with config/server.py's options (the settings as the variant's environment gives
# them) serving trivial(): what the server costs without the application.
TRIVIAL_SERVER = """
import os, sys
sys.path.insert(0, os.getcwd())
from config import server
from granian import Granian
options = server.options()
options["target"] = "bench.server_floor:" + os.environ.get("FLOOR_APP", "trivial")
Granian(**options).serve()
"""


BODY = b'{"detail":"Not found."}      '


class Closing:
    """An answer as Django's HttpResponse gives it to the server: an iterable with close()."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        return iter([self.body])

    def close(self) -> None:
        pass


def trivial(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """A WSGI application that answers 29 bytes, as granian's own floor."""
    start_response("200 OK", [("Content-Type", "application/json")])
    return [BODY]


def trivial_iterable(environ: dict[str, Any], start_response: Any) -> Closing:
    """The same answer as an iterable with close(), as Django answers."""
    start_response("200 OK", [("Content-Type", "application/json")])
    return Closing(BODY)


def worker_cpu_ns(url: str) -> int:
    """Nanoseconds every thread of the server's workers has run on a CPU so far (each
    thread's schedstat: finer than the clock ticks of /proc/<pid>/stat)."""
    total = 0
    for pid in server_workers(url):
        for schedstat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            try:
                total += int(schedstat.read_text().split()[0])
            except OSError:  # the thread ended
                continue
    return total


def worker_rss_mib(url: str) -> list[float]:
    return [round(psutil.Process(pid).memory_info().rss / 2**20, 1) for pid in server_workers(url)]


def get(client: http.client.HTTPConnection, path: str, token: str, status: int) -> float:
    """Milliseconds for one authenticated GET; another status than ``status`` stops."""
    started = time.perf_counter()
    client.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = client.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != status:
        raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
    return elapsed


def reads(
    database: str, requests: int, rng: random.Random, marquez: bool = False
) -> dict[str, list[Any]]:
    """Each read's (path, status, bare pair) for ``requests`` requests."""
    with psycopg.connect(database) as connection:
        datasets = connection.execute("SELECT max(id) FROM catalog_dataset").fetchone()[0]
        runs = connection.execute("SELECT count(*) FROM catalog_run").fetchone()[0]
    roots = [rng.randint(1, datasets) for _ in range(requests)]
    positions = [rng.randint(runs * 2 // 5, runs * 3 // 5) for _ in range(requests)]
    select_1 = bare_reads.Pair("", "SELECT 1", {})
    # bench/read.py's Marquez requests (its store's names), after the others' draws.
    marquez_reads = (
        {
            "marquez /lineage (depth 5)": [
                (pair.path, 200, pair)
                for pair in against_bare(
                    argparse.Namespace(requests=requests, datasets=datasets, database=database),
                    rng,
                )["marquez /lineage (depth 5)"]
            ]
        }
        if marquez
        else {}
    )
    return {
        "404 (bare: SELECT 1)": [
            (f"/api/v1/datasets/{MISSING}", 404, select_1) for _ in range(requests)
        ],
        "dataset detail": [
            (
                f"/api/v1/datasets/{root}",
                200,
                bare_reads.Pair("", bare_reads.BARE_DETAIL, {"id": root}),
            )
            for root in roots
        ],
        "runs, deep cursor page": [
            (
                f"/api/v1/runs?limit=50&cursor={cursor_at(position)}",
                200,
                bare_reads.Pair("", bare_reads.BARE_RUNS, {"position": position}),
            )
            for position in positions
        ],
        **marquez_reads,
    }


def timed_sql(connection: psycopg.Connection, pair: bare_reads.Pair) -> float:
    started = time.perf_counter()
    bare_reads.run(connection, pair)
    return (time.perf_counter() - started) * 1000


@contextmanager
def trivial_server(env: dict[str, str]) -> Iterator[str]:
    """granian serving a trivial application with this checkout's config/server.py options
    (the module holding the applications is this one, whatever tree a variant serves)."""
    port = free_port()
    env = {**env, "HOST": "127.0.0.1", "PORT": str(port), "LOG_LEVEL": "WARNING"}
    process = subprocess.Popen(
        [str(BIN / "python"), "-c", TRIVIAL_SERVER], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    from bench import common

    common._SERVER_PIDS[url] = process.pid
    try:
        wait_for_port(port, 60, "the trivial server")
        yield url
    finally:
        common._SERVER_PIDS.pop(url, None)
        process.terminate()
        process.wait(timeout=30)


def measure(
    url: str, token: str, database: str, scenarios: dict[str, list[Any]], label: str
) -> None:
    host, port = url.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(port), timeout=60)
    with psycopg.connect(database, autocommit=True) as connection:
        for name, triples in scenarios.items():
            for path, status, pair in triples[:20]:  # warm-up: both workers, plans
                get(client, path, token, status)
                timed_sql(connection, pair)
            cpu, switches = worker_cpu_ns(url), worker_switches(url)
            served, bare = [], []
            for path, status, pair in triples:
                served.append(get(client, path, token, status))
                bare.append(timed_sql(connection, pair))
            n = len(triples)
            cpu_us = (worker_cpu_ns(url) - cpu) / n / 1000
            per = (worker_switches(url) - switches) / n
            p95, bare_p95 = percentile(served, 0.95), percentile(bare, 0.95)
            print(
                f"{label:14} {name:24} {percentile(served, 0.5):6.2f} {p95:6.2f} "
                f"{percentile(bare, 0.5):6.2f} {bare_p95:6.2f} {p95 / bare_p95:6.1f}x "
                f"{cpu_us:7.0f} {per:6.1f}  {bare_reads.load()}",
                flush=True,
            )
    client.close()


def measure_trivial(url: str, requests: int, label: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(port), timeout=60)
    for _ in range(20):
        get(client, "/", "-", 200)
    cpu, switches = worker_cpu_ns(url), worker_switches(url)
    served = [get(client, "/", "-", 200) for _ in range(requests)]
    cpu_us = (worker_cpu_ns(url) - cpu) / requests / 1000
    per = (worker_switches(url) - switches) / requests
    print(
        f"{label:14} {'trivial WSGI app':24} {percentile(served, 0.5):6.2f} "
        f"{percentile(served, 0.95):6.2f} {'':6} {'':6} {'':7} {cpu_us:7.0f} {per:6.1f}  "
        f"{bare_reads.load()}",
        flush=True,
    )
    client.close()


def parse_variant(text: str) -> tuple[str, Path, dict[str, str]]:
    words = shlex.split(text)
    label, _, directory = words[0].partition(":")
    settings = dict(word.split("=", 1) for word in words[1:])
    return label, Path(directory) if directory else ROOT, settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a store bench/read.py built")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", action="append", help="'LABEL[:DIR] [NAME=VALUE ...]'")
    parser.add_argument("--trivial", action="store_true", help="granian's own floor too")
    parser.add_argument("--rss-requests", type=int, default=0)
    parser.add_argument(
        "--marquez", action="store_true", help="the Marquez mount's /lineage too (ADR 0140)"
    )
    options = parser.parse_args()
    variants = [parse_variant(text) for text in options.variant or ["shipped"]]
    env = bench_env(options.database)
    token = new_token(env, "read", "server-floor")
    scenarios = reads(options.database, options.requests, random.Random(42), options.marquez)
    print(
        f"{options.requests} sequential keep-alive requests each, each beside its bare SQL\n"
        f"{'variant':14} {'read':24} {'p50':>6} {'p95':>6} {'b.p50':>6} {'b.p95':>6} "
        f"{'ratio':>7} {'cpu µs':>7} {'sw/req':>6}  load"
    )
    for round_ in range(options.rounds):
        # A B, then B A: a load that rises or falls during a round favours neither.
        for label, root, settings in variants if round_ % 2 == 0 else variants[::-1]:
            with running_server({**env, **settings}, start_seconds=180.0, root=root) as url:
                measure(url, token, options.database, scenarios, label)
                if options.rss_requests:
                    before = worker_rss_mib(url)
                    missing = f"/api/v1/datasets/{MISSING}"
                    host, port = url.removeprefix("http://").split(":")
                    client = http.client.HTTPConnection(host, int(port), timeout=60)
                    for _ in range(options.rss_requests):
                        get(client, missing, token, 404)
                    print(
                        f"{label:14} workers' RSS MiB before {before}, after "
                        f"{options.rss_requests:,} more 404s {worker_rss_mib(url)}",
                        flush=True,
                    )
                else:
                    print(f"{label:14} workers' RSS MiB {worker_rss_mib(url)}", flush=True)
            if options.trivial:
                with trivial_server({**env, **settings}) as url:
                    measure_trivial(url, options.requests, label)


if __name__ == "__main__":
    main()

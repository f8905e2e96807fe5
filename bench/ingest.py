"""Ingest throughput against a running server, as ratios of the bare-PostgreSQL ceiling.

Measures, in one run on one machine and database server, from outside (HTTP, as a
producer sees it):
  1. single-event POST /api/v1/lineage from --clients concurrent keep-alive clients;
  2. its ceiling (issue 42): the same events as received, one INSERT+COMMIT each into a
     bare table of one jsonb column, over 4 connections;
  3. POST /api/v1/lineage/batch with batches of --batch-size events from two clients;
  4. its ceiling (issue 42): one connection COPYing the same events, in the same batches,
     into a bare table of one jsonb column, committed per batch;
and prints events/s for each and ingest/ceiling ratios (targets: single >= 0.6, batch
>= 0.5); the ceilings into a table shaped like ingest_event (its columns, indexes and
unique digest) are printed beside them, for what the table itself costs. Then the bytes
each stored event takes (ingest_event's heap, TOAST and indexes) against its JSON, and
5. the batch storage path in process against COPY (bench/storage_path.py).

1 and 2 alternate, --rounds times, and so do 3 and 4; each ratio printed is the median of
the rounds' ratios. A shared machine's speed drifts by up to 2x within minutes; measured one
after the other, a single figure and a ceiling taken a minute apart gave ratios from 0.27
to 0.77 on the same code. Side by side, each round's two figures see the same machine.

Usage: .venv/bin/python -m bench.ingest [--events 4000] [--rounds 5] [--url URL --token TOKEN]
Without --url it migrates a scratch database (lineage_bench) and starts the shipped web
server itself (``python -m config.server``; --workers/--threads override its layout).
"""

import argparse
import hashlib
import http.client
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import psycopg

from bench.common import (
    DEFAULT_CORPUS,
    cpu_seconds_by_pid,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    percentile,
    run_in_threads,
    running_server,
    server_cpu_seconds,
    server_workers,
    worker_switches,
)

CEILING_TABLE = "bench_ceiling_event"
BARE_TABLE = "bench_bare_event"


def post_all(
    url: str,
    token: str,
    path: str,
    bodies: list[bytes],
    clients: int,
    content_type: str = "application/json",
) -> tuple[float, list[float]]:
    """POST every body, ``clients`` keep-alive connections in parallel; (seconds, latencies)."""
    parts = urlsplit(url)
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    next_index = iter(range(len(bodies)))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}

    def client() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        while True:
            with lock:
                index = next(next_index, None)
            if index is None:
                break
            started = time.perf_counter()
            connection.request("POST", path, body=bodies[index], headers=headers)
            response = connection.getresponse()
            response.read()
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if response.status not in (200, 201):
                    errors.append(f"{response.status}")
        connection.close()

    seconds = run_in_threads(client, clients)
    if errors:
        raise SystemExit(f"{len(errors)} requests failed, e.g. status {errors[0]}")
    return seconds, latencies


def wrk_single(
    url: str, token: str, bodies: list[bytes], clients: int, seconds: float
) -> tuple[float, float, float]:
    """Single POSTs from wrk (a C load generator, so the client's CPU does not starve the
    server on a small machine); (events/s, p50 ms, p95 ms). Every body is distinct."""
    threads = 2
    with tempfile.NamedTemporaryFile("wb", suffix=".ndjson", delete=False) as handle:
        handle.write(b"\n".join(bodies) + b"\n")
    env = {**os.environ, "BODIES": handle.name, "THREADS": str(threads), "TOKEN": token}
    result = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{clients}",
            f"-d{max(1, round(seconds))}s",
            "--latency",
            "-s",
            str(Path(__file__).with_name("wrk_post.lua")),
            f"{url}/api/v1/lineage",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    os.unlink(handle.name)
    found = re.search(
        r"WRK requests=(\d+) seconds=([\d.]+) failed=(\d+) p50_ms=([\d.]+) p95_ms=([\d.]+)",
        result.stdout,
    )
    if found is None:
        raise SystemExit(f"could not read wrk's output:\n{result.stdout}{result.stderr}")
    requests, elapsed, failed, p50, p95 = found.groups()
    if int(failed):
        raise SystemExit(f"{failed} of {requests} wrk requests were not answered 201")
    if int(requests) > len(bodies):
        raise SystemExit("wrk sent more requests than distinct bodies: raise --events")
    return int(requests) / float(elapsed), float(p50), float(p95)


def ceiling_rows(bodies: list[bytes]) -> list[tuple]:
    rows = []
    for body in bodies:
        event = orjson.loads(body)
        canonical = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
        rows.append(
            (
                "run",
                event.get("eventType"),
                event["eventTime"],
                event["run"]["runId"],
                event["job"]["namespace"],
                event["job"]["name"],
                event["producer"],
                canonical.decode(),
                hashlib.sha256(b"run\n" + canonical).digest(),
                "pending",
            )
        )
    return rows


def reset_ceiling_table(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {CEILING_TABLE}")
        connection.execute(f"CREATE TABLE {CEILING_TABLE} (LIKE ingest_event INCLUDING ALL)")


INSERT = (
    f"INSERT INTO {CEILING_TABLE} (kind, event_type, event_time, run_id, job_namespace, "
    "job_name, producer, payload, digest, derivation_status, received_at) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s, now())"
)


def ceiling_single(database_url: str, rows: list[tuple], connections: int = 4) -> float:
    reset_ceiling_table(database_url)
    lock = threading.Lock()
    next_index = iter(range(len(rows)))

    def worker() -> None:
        with psycopg.connect(database_url) as connection:
            while True:
                with lock:
                    index = next(next_index, None)
                if index is None:
                    return
                connection.execute(INSERT, rows[index])
                connection.commit()

    return len(rows) / run_in_threads(worker, connections)


def ceiling_copy(database_url: str, rows: list[tuple], batch: int = 1000) -> float:
    reset_ceiling_table(database_url)
    columns = (
        "kind, event_type, event_time, run_id, job_namespace, job_name, producer, "
        "payload, digest, derivation_status"
    )
    started = time.perf_counter()
    with psycopg.connect(database_url) as connection:
        for offset in range(0, len(rows), batch):
            with connection.cursor().copy(f"COPY {CEILING_TABLE} ({columns}) FROM STDIN") as copy:
                for row in rows[offset : offset + batch]:
                    copy.write_row(row)
            connection.commit()
    return len(rows) / (time.perf_counter() - started)


def reset_bare_table(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {BARE_TABLE}")
        connection.execute(f"CREATE TABLE {BARE_TABLE} (payload jsonb NOT NULL)")


def bare_single(database_url: str, bodies: list[bytes], connections: int = 4) -> float:
    """Events/s of one INSERT+COMMIT per event (as received) into a bare jsonb table."""
    reset_bare_table(database_url)
    lock = threading.Lock()
    next_index = iter(range(len(bodies)))
    insert = f"INSERT INTO {BARE_TABLE} (payload) VALUES (%s::jsonb)"

    def worker() -> None:
        with psycopg.connect(database_url) as connection:
            while True:
                with lock:
                    index = next(next_index, None)
                if index is None:
                    return
                connection.execute(insert, (bodies[index].decode(),))
                connection.commit()

    return len(bodies) / run_in_threads(worker, connections)


def bare_copy(database_url: str, bodies: list[bytes], batch: int) -> float:
    """Events/s of one connection COPYing the events (as received) into a bare jsonb
    table, committed every ``batch`` events."""
    reset_bare_table(database_url)
    started = time.perf_counter()
    with psycopg.connect(database_url) as connection:
        for offset in range(0, len(bodies), batch):
            with connection.cursor().copy(f"COPY {BARE_TABLE} (payload) FROM STDIN") as copy:
                for body in bodies[offset : offset + batch]:
                    copy.write_row((body.decode(),))
            connection.commit()
    return len(bodies) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument(
        "--workers",
        type=int,
        help="web server processes when self-hosted (default: config/server.py's)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="threads per process when self-hosted (default: config/server.py's)",
    )
    parser.add_argument("--url", help="an already running server (else one is started)")
    parser.add_argument("--token", help="ingest token for --url")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--client",
        choices=["auto", "wrk", "python"],
        default="auto",
        help="single-POST load generator: wrk (C, Debian package) when installed, else "
        "Python http.client threads",
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="wrk run length per round")
    parser.add_argument(
        "--rounds", type=int, default=5, help="POST and ceiling measurements, alternated"
    )
    parser.add_argument(
        "--no-storage-path", action="store_true", help="skip bench/storage_path.py at the end"
    )
    args = parser.parse_args()
    if args.client == "auto":
        args.client = "wrk" if shutil.which("wrk") else "python"

    templates = load_templates(args.corpus)
    sizes = [len(body) for body in make_events(templates, args.events, seed=2)]
    print(
        f"{args.events} events per test, {min(sizes)}-{max(sizes)} bytes "
        f"(mean {sum(sizes) // len(sizes)}), {args.clients} clients ({args.client}), "
        f"batches of {args.batch_size} from 2 clients, {args.rounds} rounds, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )

    if args.url:
        if not args.token:
            raise SystemExit("--token is required with --url")
        results = run_ingest(args.url, args.token, args)
    else:
        env = migrated_database(args.database_url)
        token = new_token(env, "ingest")
        # A loaded shared machine starts the server slowly (35-55 s seen at load 10-14).
        with running_server(
            env, workers=args.workers, threads=args.threads, start_seconds=180
        ) as url:
            results = run_ingest(url, token, args)

    # What a table like ingest_event costs by itself, beside the bare ceilings (information).
    shaped_rows = ceiling_rows(make_events(templates, args.events, seed=2))
    shaped_copy = ceiling_copy(args.database_url, shaped_rows, args.batch_size)
    shaped_single = ceiling_single(args.database_url, shaped_rows)
    reset_ceiling_table(args.database_url)
    reset_bare_table(args.database_url)
    rounds, batches, cpu = results
    for number, one in enumerate(rounds, 1):
        print(
            f"round {number}: single {one.single:6.0f} events/s (p50 {one.p50:.1f} ms, "
            f"p95 {one.p95:.1f} ms), bare INSERT+COMMIT {one.ceiling:6.0f} events/s, "
            f"ratio {one.ratio:.2f}"
        )
    for number, (batch_rate, copy_rate) in enumerate(batches, 1):
        print(
            f"round {number}: batch {batch_rate:6.0f} events/s, bare COPY {copy_rate:6.0f} "
            f"events/s, ratio {batch_rate / copy_rate:.2f}"
        )
    single = statistics.median(one.single for one in rounds)
    ceiling = statistics.median(one.ceiling for one in rounds)
    ratios = sorted(one.ratio for one in rounds)
    batch_ratios = sorted(rate / copy for rate, copy in batches)
    print(f"single POST  : {single:8.0f} events/s (median of the rounds)")
    server = f"server {cpu.server * 1e6:.0f}" if cpu.server is not None else "server unknown"
    database = f", PostgreSQL {cpu.database * 1e6:.0f}" if cpu.database is not None else ""
    print(
        f"  CPU per single event: {server}{database} µs, client ({args.client}) "
        f"{cpu.client * 1e6:.0f} µs"
    )
    if cpu.switches is not None:
        print(f"  context switches per single event, the server's workers: {cpu.switches:.1f}")
    print(f"batch POST   : {statistics.median(r for r, _ in batches):8.0f} events/s (median)")
    print(f"bare INSERT+COMMIT x4    : {ceiling:8.0f} events/s (median of the rounds)")
    print(f"bare COPY x1 connection  : {statistics.median(c for _, c in batches):8.0f} events/s")
    print(
        f"shaped like ingest_event : INSERT+COMMIT x4 {shaped_single:6.0f}, COPY {shaped_copy:6.0f}"
    )
    print(
        f"ratio single/bare-insert: {statistics.median(ratios):.2f} median of "
        f"{len(ratios)} rounds ({ratios[0]:.2f}-{ratios[-1]:.2f}) (target >= 0.6)"
    )
    print(
        f"ratio batch/bare-copy   : {statistics.median(batch_ratios):.2f} median of "
        f"{len(batch_ratios)} rounds ({batch_ratios[0]:.2f}-{batch_ratios[-1]:.2f}) "
        f"(target >= 0.5)"
    )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.no_storage_path:
        return
    # The storage path the batch endpoint shares with Kafka ingest, in process (issue 28).
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.storage_path",
            "--events",
            str(args.events),
            "--database-url",
            f"{args.database_url}_storage",
        ],
        cwd=Path(__file__).resolve().parent.parent,
        check=True,
    )


@dataclass(frozen=True)
class SingleCpu:
    """CPU seconds per single event: the server's (None when not started here) and the
    load generator's. On a 2-core machine the client shares the cores with the server, so
    the rate depends on what the client costs too (issue 14, docs/benchmarks.md)."""

    server: float | None
    client: float
    database: float | None = None  # PostgreSQL's backends (None when not started here)
    # The server's workers' context switches per event (every thread's; None when not
    # started here): each costs CPU in the kernel and cold caches after it (ADR 0120).
    switches: float | None = None


@dataclass(frozen=True)
class Round:
    """One single-POST measurement and the INSERT+COMMIT ceiling taken right after it."""

    single: float  # events/s
    p50: float  # ms
    p95: float  # ms
    ceiling: float  # events/s

    @property
    def ratio(self) -> float:
        return self.single / self.ceiling


def _worker_cpu(url: str) -> dict[int, float]:
    """CPU seconds so far of each worker process of the server at ``url``."""
    return cpu_seconds_by_pid(server_workers(url))


def _database_cpu(database_url: str) -> float:
    """CPU seconds so far of the PostgreSQL backends connected to ``database_url``'s
    database (the server's connections; this query's own is left out). PostgreSQL shares
    the two cores with the server and the client, so its CPU per event counts as theirs
    does (ADR 0112)."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        pids = [
            pid
            for (pid,) in connection.execute(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
    return sum(cpu_seconds_by_pid(pids).values())


def _client_cpu() -> float:
    """CPU seconds used so far by this process (every thread: the Python client) and by
    its reaped children (wrk)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def single_round(
    url: str, token: str, bodies: list[bytes], args: argparse.Namespace
) -> tuple[float, float, float, float]:
    """Single POSTs of ``bodies`` (wrk: for --seconds); (events/s, p50 ms, p95 ms, events)."""
    if args.client == "wrk":
        rate, p50, p95 = wrk_single(url, token, bodies, args.clients, args.seconds)
        return rate, p50, p95, rate * max(1, round(args.seconds))
    seconds, latencies = post_all(url, token, "/api/v1/lineage", bodies, args.clients)
    p50, p95 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.95) * 1000
    return len(bodies) / seconds, p50, p95, len(bodies)


def run_ingest(
    url: str, token: str, args: argparse.Namespace
) -> tuple[list[Round], list[tuple[float, float]], SingleCpu]:
    """(the single rounds, (batch events/s, bare COPY events/s) per round, CPU per single
    event over every round)."""
    templates = load_templates(args.corpus)
    post_all(url, token, "/api/v1/lineage", make_events(templates, 200, seed=3), args.clients)
    own_server = not args.url
    # Distinct bodies in every round (wrk runs for a time, not a count; a repeat is a 200).
    count = max(args.events, int(args.seconds * 4000)) if args.client == "wrk" else args.events
    rounds: list[Round] = []
    served = server = client = database = 0.0
    switches = 0
    for number in range(args.rounds):
        bodies = make_events(templates, count, seed=10 + number)
        server_before = server_cpu_seconds(url) if own_server else 0.0
        database_before = _database_cpu(args.database_url) if own_server else 0.0
        switches_before = worker_switches(url) if own_server else 0
        client_before = _client_cpu()
        rate, p50, p95, sent = single_round(url, token, bodies, args)
        client += _client_cpu() - client_before
        switches += (worker_switches(url) - switches_before) if own_server else 0
        server += (server_cpu_seconds(url) - server_before) if own_server else 0.0
        database += (_database_cpu(args.database_url) - database_before) if own_server else 0.0
        served += sent
        rounds.append(Round(rate, p50, p95, bare_single(args.database_url, bodies[: args.events])))
    batches: list[tuple[float, float]] = []
    for number in range(args.rounds):
        events = make_events(templates, args.events, seed=1000 + number)
        bodies = [
            b"[" + b",".join(events[offset : offset + args.batch_size]) + b"]"
            for offset in range(0, len(events), args.batch_size)
        ]
        workers_before = _worker_cpu(url) if own_server else {}
        seconds, _ = post_all(url, token, "/api/v1/lineage/batch", bodies, 2)
        if own_server:
            # Which workers served the two clients' connections: both in one process share
            # its GIL (ADR 0096), and the round's ratio shows it.
            spent = {
                pid: cpu - workers_before.get(pid, 0.0) for pid, cpu in _worker_cpu(url).items()
            }
            split = ", ".join(f"{cpu / len(events) * 1e6:.0f}" for cpu in sorted(spent.values()))
            print(f"batch round {number + 1}: server CPU per event by worker (µs): {split}")
        batches.append(
            (len(events) / seconds, bare_copy(args.database_url, events, args.batch_size))
        )
    cpu = SingleCpu(
        server / served if own_server else None,
        client / served,
        database / served if own_server else None,
        switches / served if own_server else None,
    )
    return rounds, batches, cpu


if __name__ == "__main__":
    main()

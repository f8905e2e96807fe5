"""The namespace reads at two or more catalog sizes, so their growth with the catalog shows
(issue 42, ADR 0121).

``GET /api/v1/namespaces`` counts the current jobs and datasets per namespace and the
Marquez mount's ``/namespaces`` gives each namespace's first and last time seen: both read
the per-namespace summary PostgreSQL's triggers keep (ADR 0121; before it, they aggregated
the whole job and dataset tables on every request, as the bare SQL still does). For each store
given (stores bench/read.py built: ``--small`` has 10,000 jobs and 480 datasets, the 1M
store 10,000 jobs and 100,000 datasets) this prints the rows it holds, then

- in process (``--cpu``, the default): per request, the Python CPU and the PostgreSQL
  backend's CPU of the shipped WSGI application (production settings) and the statements
  it sent, as bench/read_request_cpu.py measures them, beside the bare SQL's;
- over HTTP (``--http``): p50/p95 of sequential keep-alive requests to the shipped server,
  each beside its bare SQL (bench/bare_reads.py's way).

The bare SQL is the same answer from PostgreSQL alone: the two GROUP BYs in one statement,
retired rows left out by the same anti-join (a benchmark may spell it; the service may not).

Usage: .venv/bin/python bench/namespaces.py --database URL [URL ...] [--requests 40]
       [--cpu] [--http]
Nothing is written but a read token per store.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.common import bench_env, new_token, percentile, running_server

RETIRED = (
    "NOT EXISTS (SELECT 1 FROM catalog_retirement rt WHERE rt.kind = {kind} "
    "AND rt.object_id = {column} AND rt.restored_at IS NULL)"
)
BARE_COUNTS = f"""
SELECT namespace, sum(jobs)::int, sum(datasets)::int FROM (
  SELECT namespace, count(*) AS jobs, 0 AS datasets FROM catalog_job j
  WHERE {RETIRED.format(kind=2, column="j.id")} GROUP BY 1
  UNION ALL
  SELECT namespace, 0, count(*) FROM catalog_dataset d
  WHERE {RETIRED.format(kind=1, column="d.id")} GROUP BY 1
) s GROUP BY 1 ORDER BY 1 LIMIT %(limit)s"""
BARE_SPANS = f"""
SELECT namespace, min(created), max(updated) FROM (
  SELECT namespace, min(first_seen) AS created, max(last_seen) AS updated FROM catalog_job j
  WHERE {RETIRED.format(kind=2, column="j.id")} GROUP BY 1
  UNION ALL
  SELECT namespace, min(first_seen), max(last_seen) FROM catalog_dataset d
  WHERE {RETIRED.format(kind=1, column="d.id")} GROUP BY 1
) s GROUP BY 1 ORDER BY 1"""

READS = {
    "/api/v1/namespaces?limit=1": (BARE_COUNTS, {"limit": 1}),
    "/api/v1/namespaces (50)": (BARE_COUNTS, {"limit": 50}),
    "marquez /namespaces": (BARE_SPANS, {}),
}
PATHS = {
    "/api/v1/namespaces?limit=1": "/api/v1/namespaces?limit=1",
    "/api/v1/namespaces (50)": "/api/v1/namespaces",
    "marquez /namespaces": "/marquez/api/v1/namespaces",
}


def sizes(database_url: str) -> str:
    with psycopg.connect(database_url) as connection:
        jobs, job_ns = connection.execute(
            "SELECT count(*), count(DISTINCT namespace) FROM catalog_job"
        ).fetchone()
        datasets, dataset_ns = connection.execute(
            "SELECT count(*), count(DISTINCT namespace) FROM catalog_dataset"
        ).fetchone()
    return f"{jobs:,} jobs ({job_ns} namespaces), {datasets:,} datasets ({dataset_ns} namespaces)"


def in_process(database_url: str, requests: int, warmup: int) -> None:
    """Runs in a child process: Django set up on ``database_url``, the WSGI app called."""
    from bench.read_request_cpu import backend_cpu_ms, in_process_reader

    call = in_process_reader(database_url, "namespaces-cpu")
    from django.db import connection

    print(
        f"{'read':28} {'python':>7} {'backend':>8} {'wall p95':>9} {'stmts':>6} {'bytes':>7}"
        f" {'bare be':>8} {'bare p95':>9}  load"
    )
    with psycopg.connect(database_url, autocommit=True) as bare:
        bare_pid = bare.info.backend_pid
        for name, (sql, values) in READS.items():
            path = PATHS[name]
            for _ in range(warmup):
                call(path)
                bare.execute(sql, values).fetchall()
            sent: list[str] = []  # counted by a wrapper: request_started resets queries_log

            def count(execute: Any, sql: str, *args: Any, sent: list[str] = sent) -> Any:
                sent.append(sql)
                return execute(sql, *args)

            with connection.execute_wrapper(count):
                size = len(call(path))
            pid = connection.connection.info.backend_pid
            python = backend = bare_backend = 0.0
            walls: list[float] = []
            bare_walls: list[float] = []
            for _ in range(requests):
                started, cpu, be = time.perf_counter(), time.process_time(), backend_cpu_ms(pid)
                call(path)
                walls.append((time.perf_counter() - started) * 1000)
                python += time.process_time() - cpu
                backend += backend_cpu_ms(pid) - be
                started, be = time.perf_counter(), backend_cpu_ms(bare_pid)
                bare.execute(sql, values).fetchall()
                bare_walls.append((time.perf_counter() - started) * 1000)
                bare_backend += backend_cpu_ms(bare_pid) - be
            print(
                f"{name:28} {python * 1000 / requests:7.1f} {backend / requests:8.1f}"
                f" {percentile(walls, 0.95):9.1f} {len(sent):6} {size:7}"
                f" {bare_backend / requests:8.1f} {percentile(bare_walls, 0.95):9.1f}"
                f"  {bare_reads.load()}",
                flush=True,
            )


def over_http(database_url: str, requests: int) -> None:
    env = bench_env(database_url)
    token = new_token(env, "read", "namespaces-http")
    scenarios = {
        name: [bare_reads.Pair(PATHS[name], sql, values)] * (requests + 10)
        for name, (sql, values) in READS.items()
    }
    with running_server(env, start_seconds=180.0) as url:
        bare_reads.print_against_bare(url, token, database_url, scenarios, "the shipped server")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", nargs="+", required=True, help="stores bench/read.py built")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cpu", action="store_true", help="in process (the default)")
    parser.add_argument("--http", action="store_true", help="through the shipped server")
    parser.add_argument("--in-process", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.in_process:
        in_process(options.in_process, options.requests, options.warmup)
        return
    cpu = options.cpu or not options.http
    for database_url in options.database:
        print(f"\n{database_url.rsplit('/', 1)[1]}: {sizes(database_url)}", flush=True)
        if cpu:
            # A child per store: Django is set up once per process, on one database.
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--database",
                    database_url,
                    "--in-process",
                    database_url,
                    "--requests",
                    str(options.requests),
                    "--warmup",
                    str(options.warmup),
                ],
                check=True,
            )
        if options.http:
            over_http(database_url, options.requests)


if __name__ == "__main__":
    main()

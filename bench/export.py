"""/api/v1/events/export over HTTP: throughput, and the web worker's memory against event size.

For each event size, builds a scratch database (lineage_bench_export) holding about
``--total-mib`` of run events of that size (generate_series SQL), starts the shipped web server
with one worker on 127.0.0.1, streams the whole export once and prints events/s, MiB/s and how much
the worker's peak resident memory (VmHWM, reset before the request) grew. The export reads
in chunks of at most LINEAGE_MAX_PAGE_BYTES of events (8 MiB shipped; ``--budget-mib``
changes it): the growth must follow the budget, not the event size or the log's size.
Usage:
  .venv/bin/python bench/export.py [--sizes-kib 3,256,2048] [--total-mib 48] [--budget-mib 8]
"""

import argparse
import http.client
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    bench_env,
    migrated_database,
    new_token,
    running_server,
    server_workers,
)

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_export"

# Each event: a RunEvent whose run facet carries ``kib`` KiB of hex (md5 blocks, so
# PostgreSQL cannot compress it away and the sizes are what a reader receives).
EVENTS_SQL = """
INSERT INTO ingest_event (received_at, kind, event_type, event_time, job_namespace, job_name,
                          payload, digest, derivation_status)
SELECT now(), 'run', 'COMPLETE', timestamptz '2026-11-01' + g * interval '1 second',
       'bench', 'job_' || (g %% 50),
       jsonb_build_object(
         'eventType', 'COMPLETE', 'eventTime', '2026-11-01T00:00:00Z',
         'run', jsonb_build_object('runId', md5(g::text), 'facets', jsonb_build_object(
           'note', (SELECT string_agg(md5(g::text || '/' || i), '')
                    FROM generate_series(1, %(blocks)s) AS i))),
         'job', jsonb_build_object('namespace', 'bench', 'name', 'job_' || (g %% 50)),
         'producer', 'https://example.com/bench'),
       sha256(g::text::bytea), 'derived'
FROM generate_series(1, %(count)s) AS g
"""


def _status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def _worker_pid(url: str) -> int:
    """The web server's one worker process."""
    workers = server_workers(url)
    if len(workers) != 1:
        raise RuntimeError(f"expected one web worker at {url}, found {workers}")
    return workers[0]


def measure(url: str, token: str) -> tuple[int, int, float, float]:
    parts = urlsplit(url)
    port = parts.port or 80
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", port, timeout=600)
    connection.request("GET", "/healthz")  # the worker has imported everything
    connection.getresponse().read()
    worker = _worker_pid(url)
    Path(f"/proc/{worker}/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = _status(worker, "VmRSS")
    started = time.perf_counter()
    connection.request("GET", "/api/v1/events/export", headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"export answered {response.status}: {response.read()[:300]!r}")
    lines = size = 0
    while chunk := response.read(1 << 20):
        size += len(chunk)
        lines += chunk.count(b"\n")
    elapsed = time.perf_counter() - started
    return lines, size, elapsed, _status(worker, "VmHWM") - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-kib", default="3,256,2048")
    parser.add_argument("--total-mib", type=int, default=48)
    parser.add_argument("--budget-mib", type=float, default=8)
    args = parser.parse_args()
    env = bench_env(DATABASE)
    env["LINEAGE_MAX_PAGE_BYTES"] = str(int(args.budget_mib * (1 << 20)))
    print(f"budget {args.budget_mib:g} MiB, about {args.total_mib} MiB of events per size")
    print("event KiB   events   MiB   seconds   events/s   MiB/s   worker peak RSS growth")
    for kib in (int(text) for text in args.sizes_kib.split(",")):
        migrated_database(DATABASE)
        count = max(1, args.total_mib * 1024 // kib)
        import psycopg

        with psycopg.connect(DATABASE, autocommit=True) as connection:
            connection.execute(EVENTS_SQL, {"blocks": max(1, kib * 1024 // 32), "count": count})
            connection.execute("ANALYZE ingest_event")
        token = new_token(env, "read")
        with running_server(env, workers=1) as url:
            lines, size, elapsed, grown = measure(url, token)
        print(
            f"{kib:>9}   {lines:>6}   {size / 2**20:>3.0f}   {elapsed:>7.1f}   "
            f"{lines / elapsed:>8.0f}   {size / 2**20 / elapsed:>5.1f}   {grown:>6.1f} MiB"
        )


if __name__ == "__main__":
    main()

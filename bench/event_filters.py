"""What ``/api/v1/events`` reads for a filter with no index in the list's order (ADR 0194).

Builds (or with ``--reuse`` keeps) a store of raw events with SQL: an old job of
``--legacy`` events under an old producer, 3 events of a rare old job, then ``--recent``
events of a streaming job interleaved with a batch job's runs of 3; no FAIL event, 5 dataset
events in the middle, the newest 2,000 pending. Then GETs each path from the shipped WSGI
application in process (``read_request_cpu.caller``), and prints per path: the
median and slowest wall milliseconds of ``--requests`` requests, the items and whether
``next`` is set, the pages followed to the first item (at most ``--follow``), and for the
statements that read ``ingest_event`` the rows their scans of it read, their execution
milliseconds and the shared buffers they touched (each replayed under
``EXPLAIN (ANALYZE, BUFFERS)``).

Usage: .venv/bin/python bench/event_filters.py --database URL [--legacy 100000]
       [--recent 320000] [--requests 5] [--follow 40] [--reuse] [PATH ...]
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env, migrated_database, new_token
from bench.read_request_cpu import caller

PATHS = [
    "/api/v1/events?limit=50",
    "/api/v1/events?event_type=FAIL",
    "/api/v1/events?event_type=START",
    "/api/v1/events?kind=dataset",
    "/api/v1/events?job_namespace=rareness",
    "/api/v1/events?derivation_status=derived",
    "/api/v1/events?job_name=streamer",
    "/api/v1/events?job_name=legacy",
    "/api/v1/events?job_name=rare",
    "/api/v1/events?producer=https://producer/1.0",
    "/api/v1/events?producer=https://producer/rare",
    "/api/v1/events?since=2025-01-02T00:00:00Z&until=2025-01-02T01:00:00Z",
    "/api/v1/events?job_name=legacy&event_type=FAIL",
    "/api/v1/events?run_id=stream-run",
    "/api/v1/events?derivation_status=pending",
]

_STORE = """
TRUNCATE ingest_event CASCADE;
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
  producer, payload, digest, derivation_status)
SELECT 'run', CASE WHEN i %% 3 = 0 THEN 'START' ELSE 'COMPLETE' END,
  '2025-01-01'::timestamptz + i * interval '10 seconds', md5('legacy' || (i / 3)), 'old',
  'legacy', 'https://producer/1.0',
  jsonb_build_object('eventType', 'START', 'pad', repeat(md5(i::text), 25), 'n', i),
  sha256(convert_to('legacy' || i, 'UTF8')), 'derived'
FROM generate_series(1, %(legacy)s) AS i;
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
  producer, payload, digest, derivation_status)
SELECT 'run', 'COMPLETE', '2025-02-01'::timestamptz + i * interval '1 second', 'rare-run',
  'rareness', 'rare', 'https://producer/rare',
  jsonb_build_object('eventType', 'COMPLETE', 'pad', repeat(md5(i::text), 25), 'n', i),
  sha256(convert_to('rare' || i, 'UTF8')), 'derived'
FROM generate_series(1, 3) AS i;
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
  producer, payload, digest, derivation_status)
SELECT 'run',
  CASE WHEN i %% 8 < 5 THEN 'RUNNING' WHEN i %% 8 = 5 THEN 'START' ELSE 'COMPLETE' END,
  '2026-01-01'::timestamptz + i * interval '5 seconds',
  CASE WHEN i %% 8 < 5 THEN 'stream-run' ELSE md5('batch' || (i / 8)) END,
  CASE WHEN i %% 8 < 5 THEN 'stream' ELSE 'batch' END,
  CASE WHEN i %% 8 < 5 THEN 'streamer' ELSE 'batch' END,
  'https://producer/2.0',
  jsonb_build_object('eventType', 'RUNNING', 'pad', repeat(md5(i::text), 25), 'n', i),
  sha256(convert_to('new' || i, 'UTF8')),
  CASE WHEN i > %(recent)s - 2000 THEN 'pending' ELSE 'derived' END
FROM generate_series(1, %(recent)s) AS i;
UPDATE ingest_event SET kind = 'dataset', event_type = NULL
WHERE id IN (SELECT id FROM ingest_event ORDER BY id LIMIT 5 OFFSET %(legacy)s + 100000);
"""


def build(database: str, legacy: int, recent: int) -> None:
    # Bound on the client: one text of several statements (server-side binding takes one).
    with psycopg.connect(
        database, autocommit=True, cursor_factory=psycopg.ClientCursor
    ) as connection:
        connection.execute(_STORE, {"legacy": legacy, "recent": recent})
        connection.execute("VACUUM ANALYZE ingest_event")


def replayed(sql: str) -> tuple[int, float, int]:
    """Rows of ``ingest_event`` its scans read, execution ms and shared buffers touched."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)
        document = cursor.fetchone()[0][0]
    plan = document["Plan"]
    read = 0

    def walk(node: dict[str, Any]) -> None:
        nonlocal read
        if node.get("Relation Name") == "ingest_event":
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            read += int(rows * node.get("Actual Loops", 1))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    buffers = plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
    return read, document["Execution Time"], buffers


def measure(call: Any, path: str, requests: int, follow: int) -> str:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    call(path)
    with CaptureQueriesContext(connection) as captured:
        body = json.loads(call(path))
    statements = [q["sql"] for q in captured.captured_queries if "ingest_event" in q["sql"]]
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        call(path)
        times.append((time.perf_counter() - started) * 1000)
    if "results" not in body:
        return f"| `{path}` | {body.get('status')} | | | | | |"
    pages, page = 1, body
    while not page["results"] and page["next"] and pages < follow:
        page = json.loads(call(page["next"][page["next"].index("/api/v1/") :]))
        pages += 1
    reads = [replayed(sql) for sql in statements]
    return (
        f"| `{path}` | {statistics.median(times):.1f} / {max(times):.1f} ms "
        f"| {len(body['results'])}, next {'set' if body['next'] else 'null'} "
        f"| {pages}{'' if page['results'] else ' (none yet)'} "
        f"| {' + '.join(f'{rows:,}' for rows, _, _ in reads)} "
        f"| {' + '.join(f'{ms:.1f}' for _, ms, _ in reads)} ms "
        f"| {' + '.join(f'{buffers:,}' for _, _, buffers in reads)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--legacy", type=int, default=100_000)
    parser.add_argument("--recent", type=int, default=320_000)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--follow", type=int, default=40)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    if not args.reuse:
        migrated_database(args.database)
        build(args.database, args.legacy, args.recent)
    env = bench_env(args.database)
    token = new_token(env, "read", "bench-event-filters")
    os.environ.update(env)
    from config.wsgi import application

    # A 503 (the read timeout) is an answer to measure here, not a failed bench.
    call = caller(application, token, answers=("200", "503"))
    print(
        "| path | request median / slowest | items | pages to an item | rows read | ms | buffers |"
    )
    print("|---|---|---|---|---|---|---|")
    for path in args.paths or PATHS:
        print(measure(call, path, args.requests, args.follow), flush=True)


if __name__ == "__main__":
    main()

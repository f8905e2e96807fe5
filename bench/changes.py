"""/api/v1/changes pages: p50/p95 over HTTP and Python and backend CPU per request in process.

Builds (in a scratch database, lineage_bench_changes) --datasets datasets (2,000) with their
aliases and three columns each, a quarter as many jobs, 20,000 runs, three lineage edges out
of each dataset, column edges out of each dataset's `amount_` column (0-24 readers: some
changes break more than the 20 a change names), 5,000 raw events, and change records of
every kind, all with generate_series SQL: per dataset a column added, its `amount_` column
removed and its `customer_` column retyped (the schema changes of one alias share their
moment, as derivation records them), an edge added and one stopped per edge, a failed run
per job, and a retirement and a restore with their detail; about half name an event, the
others none (retention). 18,900 changes at the default size.

Then, as bench/read.py does, starts the shipped web server (config/server.py) on 127.0.0.1
and prints p50/p95 (ms) of sequential keep-alive requests per page size (the first page
and pages at random cursors, 50 and 500 changes); and, as bench/read_request_cpu.py does,
calls the shipped WSGI application in this process and prints per request the Python CPU
of this process, the CPU of its PostgreSQL backend, the statements and the bytes.
``--profile SIZE`` prints cProfile's heaviest functions for the random pages of that size
instead of the CPU table.

Usage: .venv/bin/python bench/changes.py [--requests 100] [--reuse] [--cpu-only]
       [--profile 500]
"""

import argparse
import base64
import random
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.common import built_store, print_latencies, running_server
from bench.generated_events import EVENTS as GENERATED_EVENTS
from bench.read import BUILD as READ_BUILD
from bench.read_request_cpu import backend_cpu_ms, in_process_reader, print_profile

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_changes"
SIZES = (50, 500)
EVENTS = 5_000

# bench/read.py's jobs, runs, datasets, aliases, columns and lineage edges (its first six
# statements; checked below by the tables they write), sized by this store's values.
READ_TABLES = (
    "catalog_job",
    "catalog_run",
    "catalog_dataset",
    "catalog_dataset_alias",
    "catalog_dataset_field",
    "catalog_lineage_edge",
)

_HASH = "sha256(convert_to({}, 'UTF8'))"

CHANGES = [
    # Readers of each dataset's amount_ column: 0-24 column edges into later datasets.
    """INSERT INTO catalog_column_lineage_edge (source_id, source_field, target_id,
        target_field, job_id, last_run_id, transformation_type, transformation_subtype,
        transformation_description, masking, key_hash, first_seen, last_seen, run_count)
       SELECT d.id, 'amount_' || (d.id %% 77), 1 + ((d.id + k * 7) %% %(datasets)s),
              'amount_' || k, 1 + (d.id * 3 + k) %% %(jobs)s, 1 + (d.id * 3 + k) %% %(runs)s,
              'DIRECT', 'IDENTITY', '', false, """
    + _HASH.format("d.id || ':' || k")
    + """, now() - interval '20 days', now(), 1
       FROM catalog_dataset d CROSS JOIN generate_series(0, 24) AS k
       WHERE k < d.id %% 25
       ON CONFLICT DO NOTHING""",
    # Each alias's three schema changes, at one moment an alias.
    """INSERT INTO catalog_dataset_change (kind, alias_id, "column", old_type, new_type,
        changed_at, event_id, run_id, before_hash, after_hash, key_hash)
       SELECT (ARRAY['column_added', 'column_removed', 'type_changed'])[k + 1], a.id,
              (ARRAY['note_' || a.id, 'amount_' || (a.dataset_id %% 77),
                     'customer_' || (a.dataset_id %% 1000)])[k + 1],
              (ARRAY['', 'decimal(10,2)', 'int'])[k + 1],
              (ARRAY['varchar', '', 'bigint'])[k + 1],
              now() - (a.id * 7 || ' minutes')::interval,
              CASE WHEN a.id %% 2 = 0 THEN 1 + a.id %% %(events)s END,
              CASE WHEN a.id %% 3 = 0 THEN '' ELSE md5('s' || a.id)::uuid::text END, """
    + _HASH.format("'b' || a.id")
    + ", "
    + _HASH.format("'a' || a.id")
    + ", "
    + _HASH.format("k::text")
    + """
       FROM catalog_dataset_alias a CROSS JOIN generate_series(0, 2) AS k""",
    # An edge added and an edge stopped per lineage edge.
    """INSERT INTO catalog_dataset_change (kind, dataset_id, source_id, job_id, changed_at,
        event_id, run_id, previous_run_id, "column", old_type, new_type, before_hash,
        after_hash, key_hash)
       SELECT (ARRAY['edge_added', 'edge_stopped'])[k + 1], e.target_id, e.source_id, e.job_id,
              now() - (e.id * 3 + k || ' minutes')::interval,
              CASE WHEN e.id %% 2 = 1 THEN 1 + e.id %% %(events)s END,
              md5('r' || e.id || k)::uuid::text,
              CASE WHEN k = 1 THEN md5('p' || e.id)::uuid::text ELSE '' END, '', '', '', '', '', """
    + _HASH.format("k || ':' || e.id")
    + """
       FROM catalog_lineage_edge e CROSS JOIN generate_series(0, 1) AS k""",
    # A failed run after a success per job.
    """INSERT INTO catalog_dataset_change (kind, job_id, changed_at, event_id, run_id,
        previous_run_id, "column", old_type, new_type, before_hash, after_hash, key_hash)
       SELECT 'run_failed', j.id, now() - (j.id * 11 || ' minutes')::interval,
              1 + j.id %% %(events)s, md5('f' || j.id)::uuid::text,
              md5('g' || j.id)::uuid::text, '', '', '', '', '', """
    + _HASH.format("'f' || j.id")
    + """
       FROM catalog_job j""",
    # A retirement and a restore of every tenth dataset, with who and why.
    """INSERT INTO catalog_dataset_change (kind, dataset_id, changed_at, detail, "column",
        old_type, new_type, run_id, before_hash, after_hash, key_hash)
       SELECT (ARRAY['dataset_retired', 'dataset_restored'])[k + 1], d.id,
              now() - (d.id * 5 + k || ' minutes')::interval,
              'steward_' || (d.id %% 7) || ': ' || (ARRAY['replaced by the v2 table',
              'still read by the finance export'])[k + 1], '', '', '', '', '', '', """
    + _HASH.format("'l' || k || ':' || d.id")
    + """
       FROM catalog_dataset d CROSS JOIN generate_series(0, 1) AS k WHERE d.id %% 10 = 0""",
]


def build(database_url: str, options: argparse.Namespace) -> None:
    values = {
        "events": EVENTS,
        "first": 0,
        "last": EVENTS,
        "datasets": options.datasets,
        "jobs": options.datasets // 4,
        "runs": 20_000,
    }
    statements = [*READ_BUILD[: len(READ_TABLES)], GENERATED_EVENTS, *CHANGES]
    with psycopg.connect(database_url, autocommit=True) as connection:
        for number, statement in enumerate(statements):
            table = re.search(r"(?:INSERT INTO|UPDATE) (\w+)", statement).group(1)
            if number < len(READ_TABLES) and table != READ_TABLES[number]:
                raise SystemExit(f"bench/read.py's BUILD[{number}] writes {table} now")
            started = time.monotonic()
            connection.execute(statement, values)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
        connection.execute("VACUUM ANALYZE")


def cursor_at(changed_at: object, change_id: int) -> str:
    """The cursor DRF writes for the position of a change (api/tied_positions.py)."""
    return base64.b64encode(urlencode({"p": f"{changed_at}|{change_id}"}).encode()).decode()


def pages(database_url: str, requests: int, rng: random.Random) -> dict[str, list[str]]:
    """Per page size the first page and pages from random changes' positions."""
    with psycopg.connect(database_url) as connection:
        connection.execute("SET TimeZone = 'UTC'")
        count = connection.execute("SELECT count(*) FROM catalog_dataset_change").fetchone()[0]
        rows = connection.execute(
            "SELECT changed_at, id FROM catalog_dataset_change ORDER BY changed_at, id"
        ).fetchall()
    # Positions with at least a page of 500 after them, so every page is full.
    picked = [rows[rng.randrange(500, count)] for _ in range(requests)]
    scenarios: dict[str, list[str]] = {}
    for size in SIZES:
        scenarios[f"first page of {size}"] = [f"/api/v1/changes?limit={size}"] * requests
        scenarios[f"random page of {size}"] = [
            f"/api/v1/changes?limit={size}&cursor={cursor_at(at.astimezone(UTC), pk)}"
            for at, pk in picked
        ]
    return scenarios


def counted(statements: list[str]) -> Callable[..., Any]:
    """A Django execute wrapper that appends each statement's text to ``statements``."""

    def wrapper(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        statements.append(sql)
        return execute(sql, *args)

    return wrapper


def print_cpu(
    database_url: str, scenarios: dict[str, list[str]], warm: int, profile: int | None
) -> None:
    """Per scenario, the mean Python CPU of this process and of its PostgreSQL backend per
    request through the shipped WSGI application (bench/read_request_cpu.py's caller), the
    statements and bytes of one answer; or cProfile's heaviest functions for ``profile``."""
    call = in_process_reader(database_url, "changes-cpu")
    from django.db import connection

    if profile is not None:
        paths = scenarios[f"random page of {profile}"]
        for path in paths[:warm]:
            call(path)
        print_profile(call, paths)
        return
    columns = f"{'python':>8} {'backend':>8} {'stmts':>6} {'bytes':>8}"
    print(f"\n{'in process, per request, ms':34} {columns}")
    for name, paths in scenarios.items():
        for path in paths[:warm]:  # connection, caches, plans
            call(path)
        statements: list[str] = []
        with connection.execute_wrapper(counted(statements)):
            size = len(call(paths[0]))
        pid = connection.connection.info.backend_pid
        python = backend = 0.0
        for path in paths:
            started, backend_started = time.process_time(), backend_cpu_ms(pid)
            call(path)
            python += time.process_time() - started
            backend += backend_cpu_ms(pid) - backend_started
        n = len(paths)
        print(
            f"{name:34} {python * 1000 / n:8.2f} {backend / n:8.2f} {len(statements):6} {size:8}"
            f"  load {bare_reads.load()}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    parser.add_argument("--database", default=DATABASE, help="the scratch database (made anew)")
    parser.add_argument("--cpu-only", action="store_true", help="no HTTP, the CPU table only")
    parser.add_argument(
        "--profile", type=int, choices=SIZES, help="cProfile of the random pages of this size"
    )
    options = parser.parse_args()
    env, token = built_store(
        options.database,
        lambda: build(options.database, options),
        f"{options.datasets:,} datasets and their changes in {options.database}",
        options.reuse,
    )
    scenarios = pages(options.database, options.requests, random.Random(11))
    if not (options.cpu_only or options.profile):
        with running_server(env, start_seconds=180.0) as url:
            print_latencies(url, token, scenarios, f"the shipped layout, load {bare_reads.load()}")
    print_cpu(options.database, scenarios, options.warmup, options.profile)


if __name__ == "__main__":
    main()

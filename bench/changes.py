"""/api/v1/changes pages: p50/p95 over HTTP and Python and backend CPU per request in process.

Builds (in a scratch database, lineage_bench_changes) --datasets datasets (2,000) with their
aliases and three columns each, a quarter as many jobs, 20,000 runs, three lineage edges out
of each dataset, column lineage out of each dataset's `amount_` column as producers send it
(each reader's facts in its job's newest runs, the column edges folded from them; 0-24
readers: some changes break more than the 20 a change names; a quarter of them stale,
dropped by the job's newest run), 5,000 raw events, and change records of
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

# Column lineage as a producer sends it and derivation stores it: each run of a job names,
# in its output's columnLineage facet, the input column each output column is made of (the
# per-input `transformations` list, DIRECT/IDENTITY, and no field-level form), and
# derivation keeps a fact of it per run (``ColumnLineageFact``, keyed by
# ``column_values``' hash); the column edges are folded from the facts (first and last
# seen, last run, run count). Both columns are the datasets' own fields (bench/read.py's
# `id`, `customer_`, `amount_`): each dataset's `amount_` column is read by the `amount_`
# columns of 0-24 later datasets (some changes break more than the 20 a change names),
# each through a job, in its three newest runs; a reader with k % 4 = 3 was dropped by
# the job's newest run (its facts are the three runs before), so the currency statement
# finds current readers (a fact of the job's reference run) and stale ones.
TRANSFORMATION = {"type": "DIRECT", "subtype": "IDENTITY", "description": "", "masking": False}
FIELD_FORM = {"type": "", "description": ""}  # no transformationType on the field
# ``column_values``' key of such a fact is sha256 of "target\0source" and this tail;
# ``check_fact_keys`` holds the stored keys to it.
KEY_TAIL = "\0" + "\0".join(["DIRECT", "IDENTITY", "", "False", "field", "", ""])

COLUMN_LINEAGE = [
    """INSERT INTO catalog_column_lineage_fact (run_id, target_alias_id, source_alias_id,
        key_hash, target_field, source_field, transformation_type, transformation_subtype,
        transformation_description, masking, dataset_level, field_transformation_type,
        field_transformation_description, first_seen, last_seen)
       SELECT r.id, ta.id, sa.id,
              sha256(convert_to(c.target_field, 'UTF8') || '\\x00'::bytea
                     || convert_to(c.source_field, 'UTF8') || %(key_tail)s::bytea),
              c.target_field, c.source_field, 'DIRECT', 'IDENTITY', '', false, false, '', '',
              r.ended_at, r.ended_at
       FROM (SELECT d.id AS source_id, 'amount_' || (d.id %% 77) AS source_field,
                    t.id AS target_id, 'amount_' || (t.id %% 77) AS target_field,
                    1 + (d.id * 3 + k) %% %(jobs)s AS job_id, k
             FROM catalog_dataset d CROSS JOIN generate_series(0, 24) AS k
             JOIN catalog_dataset t ON t.id = 1 + ((d.id + k * 7) %% %(datasets)s)
             WHERE k < d.id %% 25) AS c
       JOIN catalog_dataset_alias sa ON sa.dataset_id = c.source_id
       JOIN catalog_dataset_alias ta ON ta.dataset_id = c.target_id
       CROSS JOIN LATERAL (
           SELECT id, ended_at FROM catalog_run WHERE job_id = c.job_id
           ORDER BY started_at DESC OFFSET CASE WHEN c.k %% 4 = 3 THEN 1 ELSE 0 END LIMIT 3
       ) AS r""",
    # The column edges, folded from their facts as derivation's recompute folds them.
    """INSERT INTO catalog_column_lineage_edge (target_id, source_id, job_id, key_hash,
        target_field, source_field, transformation_type, transformation_subtype,
        transformation_description, masking, dataset_level, field_transformation_type,
        field_transformation_description, first_seen, last_seen, last_run_id, run_count)
       SELECT ta.dataset_id, sa.dataset_id, r.job_id, f.key_hash, f.target_field,
              f.source_field, f.transformation_type, f.transformation_subtype,
              f.transformation_description, f.masking, f.dataset_level,
              f.field_transformation_type, f.field_transformation_description,
              min(f.first_seen), max(f.last_seen),
              (array_agg(f.run_id ORDER BY f.last_seen DESC, r.run_uuid DESC))[1],
              count(DISTINCT f.run_id)
       FROM catalog_column_lineage_fact f
       JOIN catalog_run r ON r.id = f.run_id
       JOIN catalog_dataset_alias ta ON ta.id = f.target_alias_id
       JOIN catalog_dataset_alias sa ON sa.id = f.source_alias_id
       GROUP BY ta.dataset_id, sa.dataset_id, r.job_id, f.key_hash, f.target_field,
                f.source_field, f.transformation_type, f.transformation_subtype,
                f.transformation_description, f.masking, f.dataset_level,
                f.field_transformation_type, f.field_transformation_description""",
]

CHANGES = [
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
        "key_tail": KEY_TAIL.encode(),
    }
    statements = [*READ_BUILD[: len(READ_TABLES)], GENERATED_EVENTS, *COLUMN_LINEAGE, *CHANGES]
    with psycopg.connect(database_url, autocommit=True) as connection:
        for number, statement in enumerate(statements):
            table = re.search(r"(?:INSERT INTO|UPDATE) (\w+)", statement).group(1)
            if number < len(READ_TABLES) and table != READ_TABLES[number]:
                raise SystemExit(f"bench/read.py's BUILD[{number}] writes {table} now")
            started = time.monotonic()
            connection.execute(statement, values)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
        connection.execute("VACUUM ANALYZE")


def check_column_facts() -> None:
    """Stops the bench unless the store's column facts are keyed as derivation keys what a
    producer sends (``column_values``: a fact of another key would be no producer's);
    prints how many of the column edges are current and stale."""
    from django.db import connection

    from catalog.lineage import currency
    from catalog.services.derivation.column_facts import column_values

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT target_field, source_field, key_hash FROM catalog_column_lineage_fact "
            "ORDER BY id LIMIT 100"
        )
        rows = cursor.fetchall()
    for target, source, key in rows:
        if column_values(target, source, TRANSFORMATION, FIELD_FORM)[1] != bytes(key):
            raise SystemExit(f"a column fact {source} -> {target} is not keyed as derivation keys")
    if not rows:
        raise SystemExit("the store has no column facts")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM catalog_column_lineage_fact")
        facts = cursor.fetchone()[0]
        cursor.execute("SELECT id, job_id FROM catalog_column_lineage_edge")
        edges = dict(cursor.fetchall())
    current = len(currency.current_column_edges(edges))
    print(
        f"{facts:,} column facts, {len(edges):,} column edges: {current:,} current (a fact "
        f"of the job's reference run), {len(edges) - current:,} stale"
    )


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

    check_column_facts()

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

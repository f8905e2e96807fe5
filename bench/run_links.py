"""A run's detail when the run read or wrote tens of thousands of datasets (ADR 0168).

Builds, with SQL, one completed run of ``--inputs`` inputs and ``--outputs`` outputs (each a
dataset of its own with one alias and one run fact: inputStatistics or outputStatistics),
beside an ordinary run of 5 inputs and 5 outputs and ``--other-runs`` more runs of those 10
datasets (a store of many runs), then GETs each run's detail from the shipped WSGI
application in process (``read_request_cpu.in_process_reader``): REST
``/api/v1/runs/{runId}``, the Marquez mount's ``jobs/runs/{runId}``, and Marquez's runs
page of the job (``namespaces/{ns}/jobs/{job}/runs``, the same read for a page of runs).
With ``--lists`` it also GETs the wide run's paged lists (ADR 0186): the first page of
``/api/v1/runs/{runId}/inputs`` (50, and 500), a page of 500 from the middle of its 50,000
(the cursor at its ``--inputs // 2``-th link) and the first page of its outputs; and times
the detail's count of the wide run's inputs in SQL, exact and stopped as the detail stops
it (``--requests`` times each, median).
Prints per read: the median and slowest wall milliseconds of ``--requests`` requests, the
statements one request ran, the rows they returned and the rows their scans read (each
statement replayed under ``EXPLAIN (ANALYZE)``; ``--plans`` prints each scan), and the
answer's bytes.

Usage: .venv/bin/python bench/run_links.py --database URL [--inputs 50000] [--outputs 50]
       [--other-runs 2000] [--requests 20] [--plans] [--reuse] [--lists]
"""

import argparse
import base64
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.catalog_rows import JOB, RUN
from bench.common import migrated_database
from bench.read_request_cpu import captured_and_timed, in_process_reader

RUN_WIDE = "00000000-0000-4000-8000-00000000a1de"
RUN_SMALL = "00000000-0000-4000-8000-0000000005aa"
JOB_PATH = "bench/jobs/wide_reader"

# One job; a run of it per (uuid, inputs, outputs); datasets, aliases, links and run
# facts by generate_series. %(run)s, %(inputs)s, %(outputs)s, %(prefix)s.


_LINKS = """
WITH n AS (
    SELECT i, CASE WHEN i <= %(inputs)s THEN 'input' ELSE 'output' END AS direction
    FROM generate_series(1, %(inputs)s + %(outputs)s) AS i
), d AS (
    INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, owners,
        tags, browse_path)
    SELECT 'postgres://bench:5432', %(prefix)s || i, '{}', '{}', '', 'active', false, now(),
        now(), now(), 0, '[]', '[]', ''
    FROM n
    RETURNING id, name
), a AS (
    INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
        reason_version, first_seen, last_seen, dataset_id, is_table_name)
    SELECT 'postgres://bench:5432', d.name,
        sha256(convert_to('postgres://bench:5432', 'UTF8') || '\\x00'::bytea
            || convert_to(d.name, 'UTF8')), 'event', '', '[]', now(),
        now(), d.id, false
    FROM d
    RETURNING id, name
), l AS (
    INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen, last_seen, via,
        confirmed)
    SELECT %(run_id)s, a.id, n.direction, now(), now(), '', false
    FROM a JOIN n ON a.name = %(prefix)s || n.i
    ORDER BY n.i
    RETURNING alias_id, direction
)
INSERT INTO catalog_run_dataset_facet (run_id, alias_id, direction, name, version, value)
SELECT %(run_id)s, l.alias_id, l.direction, l.direction || 'Statistics', '1',
    jsonb_build_object('rowCount', 1000, 'size', 65536)
FROM l
"""


# %(others)s more runs of the job, each of the small run's 10 datasets: a store of many
# runs, whose statistics tell PostgreSQL that one run's links are few of the table's.
_OTHER_RUNS = """
WITH r AS (
    INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
        state_version, started_at, ended_at, first_event_time, last_event_time, error_message,
        is_streaming, facets, facet_versions, job_version, updated_at, shares_run_id, tags)
    SELECT md5('other' || i)::uuid, md5('other' || i), %(job)s, false, 'COMPLETE', '[]',
        now() - interval '2 hours', now() - interval '2 hours', now() - interval '2 hours',
        now() - interval '2 hours', '', false, '{}', '{}', '[]', now(), false, '[]'
    FROM generate_series(1, %(others)s) AS i
    RETURNING id
)
INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen, last_seen, via,
    confirmed)
SELECT r.id, w.alias_id, w.direction, now(), now(), '', false
FROM r, catalog_run_dataset w JOIN catalog_run s ON s.id = w.run_id AND s.run_uuid = %(small)s
"""


def build(database_url: str, inputs: int, outputs: int, others: int) -> str:
    """The two runs in a new database; the job's namespace/name path."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        job = connection.execute(JOB, {"name": "wide_reader"}).fetchone()[0]
        for run, many_in, many_out, prefix in (
            (RUN_WIDE, inputs, outputs, "wide.t"),
            (RUN_SMALL, 5, 5, "small.t"),
        ):
            started = time.monotonic()
            run_id = connection.execute(
                RUN, {"run": run, "job": job, "age": "1 hour", "streaming": False}
            ).fetchone()[0]
            connection.execute(
                _LINKS,
                {
                    "run_id": run_id,
                    "inputs": many_in,
                    "outputs": many_out,
                    "prefix": prefix,
                },
            )
            print(
                f"  run {run}: {many_in:,} inputs, {many_out:,} outputs in "
                f"{time.monotonic() - started:.1f}s",
                flush=True,
            )
        started = time.monotonic()
        connection.execute(_OTHER_RUNS, {"job": job, "others": others, "small": RUN_SMALL})
        print(f"  {others:,} other runs of 10 datasets in {time.monotonic() - started:.1f}s")
        connection.execute("VACUUM ANALYZE")
    return JOB_PATH


def rows_read(connection: psycopg.Connection, sql: str, plans: bool) -> tuple[int, int]:
    """The rows ``sql`` returned and the rows its scans read, by ``EXPLAIN ANALYZE``;
    ``plans``: print each scan (table, index, rows read)."""
    plan = connection.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql).fetchone()[0][0]["Plan"]

    def scanned(node: dict[str, Any]) -> int:
        own = 0
        if "Scan" in node["Node Type"] and "Relation Name" in node:
            own = int(node["Actual Rows"] * node.get("Actual Loops", 1))
            own += int(node.get("Rows Removed by Filter", 0) * node.get("Actual Loops", 1))
            if plans:
                print(f"      {node['Relation Name']} {node.get('Index Name', '(seq)')}: {own:,}")
        return own + sum(scanned(child) for child in node.get("Plans", []))

    if plans:
        print("    " + " ".join(sql.split())[:110])
    return int(plan["Actual Rows"]), scanned(plan)


def _short(path: str) -> str:
    """``path`` with the two runs' UUIDs named, so that what follows them is printed."""
    return path.replace(RUN_WIDE, "{wide}").replace(RUN_SMALL, "{small}")


def measure(call: Any, path: str, requests: int, database_url: str, plans: bool) -> None:
    body, statements, times = captured_and_timed(call, path, requests)
    returned = scanned = 0
    with psycopg.connect(database_url, autocommit=True) as replay:
        for sql in statements:
            if sql.lstrip("( \n").upper().startswith(("SELECT", "WITH")):
                got, read = rows_read(replay, sql, plans)
                returned += got
                scanned += read
    print(
        f"{_short(path)[:60]:<60} median {statistics.median(times):8.1f} ms"
        f"  max {max(times):8.1f} ms"
        f"  {len(statements):2d} statements  rows returned {returned:7,}  scanned {scanned:8,}"
        f"  {len(body):9,} bytes",
        flush=True,
    )


# How many inputs the wide run has: every one (exact), or up to one past the detail's
# bound, as ``RunQuerySet.with_link_counts`` reads them (%(cap)s: RUN_LINKS_COUNTED + 1).
_COUNTS = {
    "exact": "SELECT count(*) FROM catalog_run_dataset WHERE run_id = %(run)s"
    " AND direction = 'input'",
    "stopped": "SELECT count(*) FROM (SELECT id FROM catalog_run_dataset WHERE run_id = %(run)s"
    " AND direction = 'input' LIMIT %(cap)s) AS counted",
}


def counts(database_url: str, requests: int) -> None:
    """The median milliseconds of each count of the wide run's inputs, in SQL."""
    cap = 10_000 + 1  # catalog.models.RUN_LINKS_COUNTED + 1, without importing Django here
    with psycopg.connect(database_url, autocommit=True) as connection:
        run = connection.execute(
            "SELECT id FROM catalog_run WHERE run_uuid = %s", [RUN_WIDE]
        ).fetchone()[0]
        for label, sql in _COUNTS.items():
            connection.execute(sql, {"run": run, "cap": cap})  # warm
            times, counted = [], 0
            for _ in range(requests):
                started = time.perf_counter()
                counted = connection.execute(sql, {"run": run, "cap": cap}).fetchone()[0]
                times.append((time.perf_counter() - started) * 1000)
            print(
                f"count of the wide run's inputs, {label}: {counted:,} in median "
                f"{statistics.median(times):.1f} ms, max {max(times):.1f} ms",
                flush=True,
            )


def middle_cursor(database_url: str, position: int) -> str:
    """The cursor of the wide run's inputs list at its ``position``-th link (by id), as DRF
    writes one: base64 of ``p=<link id>``."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        link = connection.execute(
            "SELECT w.id FROM catalog_run_dataset w JOIN catalog_run r ON r.id = w.run_id"
            " WHERE r.run_uuid = %s AND w.direction = 'input' ORDER BY w.id OFFSET %s LIMIT 1",
            [RUN_WIDE, position],
        ).fetchone()[0]
    return base64.b64encode(f"p={link}".encode()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--inputs", type=int, default=50_000)
    parser.add_argument("--outputs", type=int, default=50)
    parser.add_argument("--other-runs", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--plans", action="store_true", help="print each statement's scans")
    parser.add_argument("--reuse", action="store_true", help="the store a run before built")
    parser.add_argument("--lists", action="store_true", help="the wide run's lists and count")
    options = parser.parse_args()
    if options.reuse:
        job_path = JOB_PATH
    else:
        migrated_database(options.database)
        job_path = build(options.database, options.inputs, options.outputs, options.other_runs)
    call = in_process_reader(options.database, "run-links")
    namespace, _, job = job_path.partition("/jobs/")
    for run in (RUN_SMALL, RUN_WIDE):
        measure(call, f"/api/v1/runs/{run}", options.requests, options.database, options.plans)
        measure(
            call,
            f"/marquez/api/v1/jobs/runs/{run}",
            options.requests,
            options.database,
            options.plans,
        )
    measure(
        call,
        f"/marquez/api/v1/namespaces/{namespace}/jobs/{job}/runs?limit=100",
        options.requests,
        options.database,
        options.plans,
    )
    if not options.lists:
        return
    wide = f"/api/v1/runs/{RUN_WIDE}"
    middle = middle_cursor(options.database, options.inputs // 2)
    for path in (
        f"{wide}/inputs",
        f"{wide}/inputs?limit=500",
        f"{wide}/inputs?limit=500&cursor={middle}",
        f"{wide}/outputs",
    ):
        measure(call, path, options.requests, options.database, options.plans)
    counts(options.database, options.requests)


if __name__ == "__main__":
    main()

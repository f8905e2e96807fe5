"""Impact report latency over HTTP: a dataset with --downstream (10,000) datasets downstream.

Builds (in a scratch database, lineage_bench_impact) a root dataset read by one job that
writes --fanout (100) datasets, each of which is read by a job of its own that writes its
share of the rest: --downstream datasets two hops down, with their lineage edges, job
edges, one completed run per job and its edge-run rows (a tenth of the jobs completed a
later run that wrote nothing: their outputs are stale), plus --other-datasets unrelated
datasets and --events raw events (default 1,000,000; all with generate_series SQL). Then
starts the shipped web server on 127.0.0.1 and measures sequential keep-alive requests:

  all (JSON)  GET /impact?node=dataset:<root>&max_items=10000   (every item: 10,101)
  all (CSV)   the same with format=csv, read to the end
  first page  GET /impact?node=dataset:<root>                   (default max_items 1,000)
  one branch  GET /impact?node=dataset:<a level-1 dataset>      (its ~100 datasets)

and prints p50/p95/max (ms) for each. Usage:
  .venv/bin/python bench/impact.py [--events 1000000] [--requests 50] [--reuse] [--database URL]
"""

import argparse
import random
import re
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import built_store, print_latencies, running_server
from bench.read import BUILD as READ_BUILD

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_impact"
# The raw events of bench/read.py's store (their content does not matter to the report).
EVENTS = next(statement for statement in READ_BUILD if "INSERT INTO ingest_event" in statement)

# Dataset 1 is the root; 2..fanout+1 the first level (job 1 writes them); each later dataset
# c is written by the job of its parent p = 2 + (c - fanout - 2) % fanout, whose id is p.
BUILD = [
    """INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
        processing_type, job_type, integration, description, first_seen, last_seen, updated_at,
        owners, tags)
       SELECT 'airflow', 'impact.task_' || i,
              sha256('airflow'::bytea || decode('00', 'hex')
                     || convert_to('impact.task_' || i, 'UTF8')),
              false, jsonb_build_object('ownership', jsonb_build_object('owners',
                jsonb_build_array(jsonb_build_object('name', 'team:' || (i %% 7))))), '{}',
              'BATCH', 'TASK', 'AIRFLOW', '', now() - interval '30 days', now(), now(), '[]', '[]'
       FROM generate_series(1, %(fanout)s + 1) AS i""",
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
        started_at, ended_at, error_message, is_streaming, facets, facet_versions, job_version,
        updated_at, first_event_time, last_event_time, shares_run_id, tags)
       SELECT md5('impact' || i)::uuid, md5('impact' || i)::uuid::text,
              CASE WHEN i <= %(fanout)s + 1 THEN i ELSE i - %(fanout)s - 1 END, false,
              'COMPLETE', '[]', now() - ((1000 - i) || ' minutes')::interval,
              now() - ((1000 - i) || ' minutes')::interval + interval '5 minutes', '', false,
              '{}', '{}', '[]', now(), now() - ((1000 - i) || ' minutes')::interval,
              now() - ((1000 - i) || ' minutes')::interval, false, '[]'
       FROM generate_series(1, 2 * (%(fanout)s + 1)) AS i
       WHERE i <= %(fanout)s + 1 OR (i - %(fanout)s - 1) %% 10 = 0""",
    """INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, owners, tags,
        browse_path)
       SELECT 'postgres://db' || (i %% 20) || ':5432', 'impact.table_' || i,
              jsonb_build_object('ownership', jsonb_build_object('owners',
                jsonb_build_array(jsonb_build_object('name', 'team:' || (i %% 13))))), '{}',
              '', '', false, now() - interval '30 days', now(), now(), 2, '[]', '[]', ''
       FROM generate_series(1, %(downstream)s + 1 + %(other)s) AS i""",
    """INSERT INTO catalog_dataset_alias (namespace, name, key_hash, dataset_id, reason,
        reason_detail, reason_version, first_seen, last_seen, is_table_name)
       SELECT namespace, name, sha256(convert_to(namespace, 'UTF8') || decode('00', 'hex')
              || convert_to(name, 'UTF8')), id, 'event', '', '[]', first_seen, last_seen, false
       FROM catalog_dataset""",
    """INSERT INTO catalog_lineage_edge (source_id, target_id, job_id, first_seen, last_seen,
        last_run_id, run_count, lineage_type, pipeline)
       SELECT CASE WHEN c <= %(fanout)s + 1 THEN 1 ELSE 2 + (c - %(fanout)s - 2) %% %(fanout)s END,
              c,
              CASE WHEN c <= %(fanout)s + 1 THEN 1 ELSE 2 + (c - %(fanout)s - 2) %% %(fanout)s END,
              now() - interval '20 days', now(), NULL, 1, '', ''
       FROM generate_series(2, %(downstream)s + 1) AS c""",
    """INSERT INTO catalog_job_edge (job_id, dataset_id, direction, first_seen, last_seen,
        run_count, last_run_id)
       SELECT job_id, source_id, 'input', min(first_seen), max(last_seen), 1, job_id
       FROM catalog_lineage_edge GROUP BY job_id, source_id
       UNION ALL
       SELECT job_id, target_id, 'output', min(first_seen), max(last_seen), 1, job_id
       FROM catalog_lineage_edge GROUP BY job_id, target_id""",
    # Each job's first run (its id is the job's) made its edges; the later runs none.
    """INSERT INTO catalog_job_edge_run (edge_id, run_id, first_seen, last_seen, completed)
       SELECT id, job_id, first_seen, last_seen, true FROM catalog_job_edge""",
]


def build(database_url: str, options: argparse.Namespace) -> None:
    values = {
        "events": options.events,
        "first": 0,
        "last": options.events,
        "jobs": options.fanout + 1,
        "fanout": options.fanout,
        "downstream": options.downstream,
        "other": options.other_datasets,
    }
    with psycopg.connect(database_url, autocommit=True) as connection:
        for statement in [*BUILD, EVENTS]:
            started = time.monotonic()
            connection.execute(statement, values)
            table = re.search(r"INSERT INTO (\w+)", statement).group(1)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
        connection.execute("VACUUM ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--downstream", type=int, default=10_000)
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--other-datasets", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument(
        "--workers", type=int, help="web server processes (default: config/server.py's)"
    )
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    parser.add_argument(
        "--database", default=DATABASE, help=f"the scratch database, made anew (default {DATABASE})"
    )
    options = parser.parse_args()
    env, token = built_store(
        options.database,
        lambda: build(options.database, options),
        f"{options.events:,} events, {options.downstream:,} datasets downstream of one "
        f"(fan-out {options.fanout}), {options.other_datasets:,} others",
        options.reuse,
    )
    rng = random.Random(5)
    n = options.requests
    everything = f"/api/v1/impact?node=dataset:1&max_items={min(10_000, options.downstream)}"
    scenarios = {
        "all (JSON, max_items 10,000)": [everything] * n,
        "all (CSV, max_items 10,000)": [everything + "&format=csv"] * n,
        "first page (max_items 1,000)": ["/api/v1/impact?node=dataset:1"] * n,
        "one branch (~100 datasets)": [
            f"/api/v1/impact?node=dataset:{rng.randint(2, options.fanout + 1)}" for _ in range(n)
        ],
    }
    with running_server(env, workers=options.workers, start_seconds=120) as url:
        layout = f"as shipped, workers={options.workers or 'default'}"
        print_latencies(url, token, scenarios, layout)


if __name__ == "__main__":
    main()

"""Read API latency over HTTP on a big generated store.

Builds (in a scratch database, lineage_bench_read) a store of --events raw events (default
1,000,000), --datasets datasets (100,000, one alias and three columns each), 10,000 jobs,
100,000 runs and 3 x --datasets lineage edges (300,000), with generate_series SQL (about a
minute), then starts gunicorn on 127.0.0.1 and measures sequential keep-alive requests:

  graph   GET /lineage/graph?node=dataset:<random>&direction=both&depth=5&max_nodes=500
  search  GET /search?q=<a table name, half of them with a typo>
  detail  GET /datasets/<random id>
  deep    GET /events?cursor=<a position ~half a million rows deep>&limit=50
  runs    GET /runs?cursor=<a deep position>&limit=50

and prints p50/p95 (ms) for each. Usage:
  .venv/bin/python bench/read.py [--requests 200] [--reuse]   (--reuse: keep the built store)
"""

import argparse
import base64
import http.client
import random
import re
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_env, manage, percentile, recreate_database, running_server

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_read"
JOBS = 10_000
RUNS = 100_000

# Every NOT NULL column is given: Django's defaults are Python-side, not database defaults.
BUILD = [
    """INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
        processing_type, job_type, integration, description, first_seen, last_seen, updated_at)
       SELECT 'airflow', 'dag_' || (i %% 500) || '.task_' || i,
              sha256('airflow'::bytea || decode('00', 'hex')
                     || convert_to('dag_' || (i %% 500) || '.task_' || i, 'UTF8')),
              false, '{}', '{}', 'BATCH', 'TASK', 'AIRFLOW', 'Loads partition ' || i,
              now() - interval '30 days', now(), now()
       FROM generate_series(1, %(jobs)s) AS i""",
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
        started_at, ended_at, error_message, is_streaming, facets, facet_versions, job_version,
        updated_at, first_event_time, last_event_time)
       SELECT md5(i::text)::uuid, md5(i::text)::uuid::text, 1 + i %% %(jobs)s, false,
              CASE WHEN i %% 10 = 0 THEN 'FAIL' ELSE 'COMPLETE' END, '[]',
              now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval
              + interval '5 minutes', '', false, '{}', '{}', '[]', now(),
              now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval
       FROM generate_series(1, %(runs)s) AS i""",
    """INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at)
       SELECT 'postgres://db' || (i %% 20) || ':5432', 'schema_' || (i %% 50) || '.table_' || i,
              '{}', '{}', 'Table number ' || i || ' of the warehouse', '', false,
              now() - interval '30 days', now(), now()
       FROM generate_series(1, %(datasets)s) AS i""",
    """INSERT INTO catalog_dataset_alias (namespace, name, key_hash, dataset_id, reason,
        reason_detail, reason_version, first_seen, last_seen)
       SELECT namespace, name, sha256(convert_to(namespace, 'UTF8') || decode('00', 'hex')
              || convert_to(name, 'UTF8')), id, 'event', '', '[]', first_seen, last_seen
       FROM catalog_dataset""",
    """INSERT INTO catalog_dataset_field (dataset_id, ordinal, name, type, description)
       SELECT d.id, k,
              (ARRAY['id', 'customer_' || (d.id %% 1000), 'amount_' || (d.id %% 77)])[k + 1],
              'varchar', ''
       FROM catalog_dataset d CROSS JOIN generate_series(0, 2) AS k""",
    # 3 edges out of each dataset towards higher-numbered ones (wrapping): a connected graph
    # with cycles through the wrap, fan-out 3 and fan-in 3.
    """INSERT INTO catalog_lineage_edge (source_id, target_id, job_id, first_seen, last_seen,
        last_run_id, run_count, lineage_type, pipeline)
       SELECT 1 + (i - 1), 1 + ((i - 1 + 1 + k * 37 + (i %% 13) * 101) %% %(datasets)s),
              1 + (i * 3 + k) %% %(jobs)s, now() - interval '20 days', now(),
              1 + (i * 3 + k) %% %(runs)s, 1, '', ''
       FROM generate_series(1, %(datasets)s) AS i CROSS JOIN generate_series(0, 2) AS k
       ON CONFLICT DO NOTHING""",
    """INSERT INTO ingest_event (received_at, kind, event_type, event_time, run_id,
        job_namespace, job_name, producer, payload, digest, derivation_status)
       SELECT now() - ((%(events)s - i) || ' seconds')::interval, 'run',
              (ARRAY['START', 'COMPLETE'])[1 + i %% 2],
              now() - ((%(events)s - i) || ' seconds')::interval, md5((i / 2)::text)::uuid::text,
              'airflow', 'dag_' || (i %% 500) || '.task_' || (i %% %(jobs)s),
              'https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/airflow',
              jsonb_build_object('eventType', (ARRAY['START', 'COMPLETE'])[1 + i %% 2],
                'eventTime', now(), 'run', jsonb_build_object('runId', md5((i / 2)::text)::uuid),
                'job', jsonb_build_object('namespace', 'airflow', 'name', 'dag_' || (i %% 500)),
                'inputs', '[]'::jsonb, 'outputs', '[]'::jsonb,
                'producer', 'https://github.com/OpenLineage/OpenLineage',
                'schemaURL', 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent'),
              sha256(int8send(i)), 'derived'
       FROM generate_series(1, %(events)s) AS i""",
]


def build(database_url: str, events: int, datasets: int) -> None:
    values = {"events": events, "datasets": datasets, "jobs": JOBS, "runs": RUNS}
    with psycopg.connect(database_url, autocommit=True) as connection:
        for statement in BUILD:
            started = time.monotonic()
            connection.execute(statement, values)
            table = re.search(r"INSERT INTO (\w+)", statement).group(1)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
        connection.execute("VACUUM ANALYZE")


def timed(connection: http.client.HTTPConnection, path: str, token: str) -> float:
    started = time.perf_counter()
    connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
    return elapsed


def cursor_at(position: int) -> str:
    return base64.b64encode(f"p={position}".encode()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--datasets", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument(
        "--workers", type=int, help="gunicorn workers (default: config/gunicorn.conf.py's)"
    )
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    options = parser.parse_args()
    env = bench_env(DATABASE)
    if not options.reuse:
        print(
            f"building {options.events:,} events, {options.datasets:,} datasets, "
            f"{3 * options.datasets:,} edges in lineage_bench_read ...",
            flush=True,
        )
        started = time.monotonic()
        recreate_database(DATABASE)
        manage(env, "migrate", "--verbosity", "0")
        build(DATABASE, options.events, options.datasets)
        print(f"built in {time.monotonic() - started:.0f}s", flush=True)
    token = manage(env, "create_token", "--scope", "read", "--name", "bench").split()[-1]
    rng = random.Random(11)
    n = options.requests
    scenarios = {
        "graph (depth 5, max_nodes 500)": [
            f"/api/v1/lineage/graph?node=dataset:{rng.randint(1, options.datasets)}"
            "&direction=both&depth=5&max_nodes=500"
            for _ in range(n)
        ],
        "search": [
            "/api/v1/search?q="
            + (
                f"table_{rng.randint(1, options.datasets)}"
                if i % 2
                else f"tabel_{rng.randint(1, options.datasets)}"
            )
            for i in range(n)
        ],
        "dataset detail": [
            f"/api/v1/datasets/{rng.randint(1, options.datasets)}" for _ in range(n)
        ],
        "events deep cursor page": [
            f"/api/v1/events?limit=50&cursor={cursor_at(rng.randint(400_000, 600_000))}"
            for _ in range(n)
        ],
        "runs deep cursor page": [
            f"/api/v1/runs?limit=50&cursor={cursor_at(rng.randint(40_000, 60_000))}"
            for _ in range(n)
        ],
    }
    with running_server(env, workers=options.workers) as url:
        host, port = url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        layout = f"{options.workers} workers" if options.workers else "the shipped layout"
        print(f"\n{n} sequential keep-alive requests each, gunicorn with {layout}")
        print(f"{'request':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        for name, paths in scenarios.items():
            for path in paths[:10]:  # warm-up: caches, connections, plans
                timed(connection, path, token)
            latencies = [timed(connection, path, token) for path in paths]
            print(
                f"{name:34} {percentile(latencies, 0.5):8.1f} "
                f"{percentile(latencies, 0.95):8.1f} {max(latencies):8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()

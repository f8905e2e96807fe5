"""Read API latency over HTTP on a big generated store.

Builds (in a scratch database, lineage_bench_read) a store of --events raw events (default
1,000,000), --datasets datasets (100,000, one alias and three columns each), 10,000 jobs,
100,000 runs, 3 x --datasets lineage edges (300,000) with their job edges, and a
long-history region: the edges out of datasets 1..--history-datasets (100) were each made
by --runs-per-edge (2,000) runs, so ~300 edges and their jobs carry thousands of runs
(~600,000 more runs, with their edge-run rows); all with generate_series SQL. Then starts
the shipped web server (config/server.py) on 127.0.0.1 and measures sequential keep-alive
requests:

  graph   GET /lineage/graph?node=dataset:<random>&direction=both&depth=5&max_nodes=500
  search  GET /search?q=<a table name, half of them with a typo>
  detail  GET /datasets/<random id>
  deep    GET /events?cursor=<a position ~half a million rows deep>&limit=50
  runs    GET /runs?cursor=<a deep position>&limit=50
  history: the graph (now, as_of, since) and diff around a dataset of the long-history
          region, its detail, and its jobs' run history (first page and a deep page)

and prints p50/p95 (ms) for each. Usage:
  .venv/bin/python bench/read.py [--requests 200] [--reuse]   (--reuse: keep the built store)
"""

import argparse
import base64
import random
import re
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.common import built_store, print_latencies, running_server
from bench.generated_events import EVENTS as GENERATED_EVENTS

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_read"
JOBS = 10_000
RUNS = 100_000

# Every NOT NULL column is given: Django's defaults are Python-side, not database defaults.
BUILD = [
    """INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
        processing_type, job_type, integration, description, first_seen, last_seen, updated_at,
        tags, owners)
       SELECT 'airflow', 'dag_' || (i %% 500) || '.task_' || i,
              sha256('airflow'::bytea || decode('00', 'hex')
                     || convert_to('dag_' || (i %% 500) || '.task_' || i, 'UTF8')),
              false, '{}', '{}', 'BATCH', 'TASK', 'AIRFLOW', 'Loads partition ' || i,
              now() - interval '30 days', now(), now(), '[]', '[]'
       FROM generate_series(1, %(jobs)s) AS i""",
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
        started_at, ended_at, error_message, is_streaming, facets, facet_versions, job_version,
        updated_at, first_event_time, last_event_time, shares_run_id, tags)
       SELECT md5(i::text)::uuid, md5(i::text)::uuid::text, 1 + i %% %(jobs)s, false,
              CASE WHEN i %% 10 = 0 THEN 'FAIL' ELSE 'COMPLETE' END, '[]',
              now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval
              + interval '5 minutes', '', false, '{}', '{}', '[]', now(),
              now() - (i || ' minutes')::interval, now() - (i || ' minutes')::interval, false,
              '[]'
       FROM generate_series(1, %(runs)s) AS i""",
    """INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags, owners,
        browse_path)
       SELECT 'postgres://db' || (i %% 20) || ':5432', 'schema_' || (i %% 50) || '.table_' || i,
              '{}', '{}', 'Table number ' || i || ' of the warehouse', '', false,
              now() - interval '30 days', now(), now(), 2, '[]', '[]', ''
       FROM generate_series(1, %(datasets)s) AS i""",
    """INSERT INTO catalog_dataset_alias (namespace, name, key_hash, dataset_id, reason,
        reason_detail, reason_version, first_seen, last_seen, is_table_name)
       SELECT namespace, name, sha256(convert_to(namespace, 'UTF8') || decode('00', 'hex')
              || convert_to(name, 'UTF8')), id, 'event', '', '[]', first_seen, last_seen, false
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
    # Every job reads its edges' sources and writes their targets (job edges and the jobs'
    # declared datasets, as derivation records them since issue 12).
    """INSERT INTO catalog_job_edge (job_id, dataset_id, direction, first_seen, last_seen,
        run_count, last_run_id)
       SELECT job_id, source_id, 'input', min(first_seen), max(last_seen), 1, max(last_run_id)
       FROM catalog_lineage_edge GROUP BY job_id, source_id
       UNION ALL
       SELECT job_id, target_id, 'output', min(first_seen), max(last_seen), 1, max(last_run_id)
       FROM catalog_lineage_edge GROUP BY job_id, target_id""",
    """INSERT INTO catalog_job_dataset (job_id, alias_id, direction, declared, first_seen,
        last_seen)
       SELECT je.job_id, a.id, je.direction, false, je.first_seen, je.last_seen
       FROM catalog_job_edge je JOIN catalog_dataset_alias a ON a.dataset_id = je.dataset_id""",
    # Long histories: the edges out of the first --history-datasets datasets were each made
    # by --runs-per-edge hourly runs of their job (a scheduled fleet, years of it).
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
        state_version, started_at, ended_at, state_time, error_message, is_streaming, facets,
        facet_versions, job_version, updated_at, first_event_time, last_event_time,
        shares_run_id, tags)
       SELECT md5('h' || e.id || '.' || r)::uuid, 'h:' || e.id || ':' || r, e.job_id, false,
              CASE WHEN r %% 10 = 0 THEN 'FAIL' ELSE 'COMPLETE' END, '[]',
              now() - (r || ' hours')::interval,
              now() - (r || ' hours')::interval + interval '5 minutes',
              now() - (r || ' hours')::interval + interval '5 minutes', '', false, '{}', '{}',
              '[]', now(), now() - (r || ' hours')::interval,
              now() - (r || ' hours')::interval + interval '5 minutes', false, '[]'
       FROM catalog_lineage_edge e CROSS JOIN generate_series(1, %(history_runs)s) AS r
       WHERE e.source_id <= %(history_datasets)s""",
    """INSERT INTO catalog_lineage_edge_run (edge_id, run_id, first_seen, last_seen)
       SELECT split_part(run_id_text, ':', 2)::bigint, id, started_at, ended_at
       FROM catalog_run WHERE run_id_text LIKE 'h:%%'""",
    """INSERT INTO catalog_job_edge_run (edge_id, run_id, first_seen, last_seen)
       SELECT je.id, er.run_id, min(er.first_seen), max(er.last_seen)
       FROM catalog_lineage_edge_run er JOIN catalog_lineage_edge e ON e.id = er.edge_id
       JOIN catalog_job_edge je ON je.job_id = e.job_id
        AND ((je.direction = 'input' AND je.dataset_id = e.source_id)
             OR (je.direction = 'output' AND je.dataset_id = e.target_id))
       GROUP BY je.id, er.run_id""",
    """UPDATE catalog_lineage_edge e
       SET run_count = h.runs, first_seen = h.first, last_seen = h.last, last_run_id = h.run
       FROM (SELECT edge_id, count(*) AS runs, min(first_seen) AS first,
                    max(last_seen) AS last, (array_agg(run_id ORDER BY last_seen DESC))[1] AS run
             FROM catalog_lineage_edge_run GROUP BY edge_id) h
       WHERE e.id = h.edge_id""",
    """UPDATE catalog_job_edge e
       SET run_count = h.runs, first_seen = h.first, last_seen = h.last, last_run_id = h.run
       FROM (SELECT edge_id, count(*) AS runs, min(first_seen) AS first,
                    max(last_seen) AS last, (array_agg(run_id ORDER BY last_seen DESC))[1] AS run
             FROM catalog_job_edge_run GROUP BY edge_id) h
       WHERE e.id = h.edge_id""",
    GENERATED_EVENTS,  # events 1..--events (bench/generated_events.py)
]


def add_store_arguments(parser: argparse.ArgumentParser, events: int, datasets: int) -> None:
    """The generated store's size options (read.py, marquez.py and admin.py build it)."""
    parser.add_argument("--events", type=int, default=events)
    parser.add_argument("--datasets", type=int, default=datasets)
    parser.add_argument(
        "--history-datasets",
        type=int,
        default=100,
        help="the edges out of datasets 1..N carry --runs-per-edge runs each",
    )
    parser.add_argument("--runs-per-edge", type=int, default=2000)


def build(database_url: str, options: argparse.Namespace) -> None:
    values = {
        "events": options.events,
        "first": 0,
        "last": options.events,
        "datasets": options.datasets,
        "jobs": JOBS,
        "runs": RUNS,
        "history_datasets": options.history_datasets,
        "history_runs": options.runs_per_edge,
    }
    with psycopg.connect(database_url, autocommit=True) as connection:
        for statement in BUILD:
            started = time.monotonic()
            connection.execute(statement, values)
            table = re.search(r"(?:INSERT INTO|UPDATE) (\w+)", statement).group(1)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
        connection.execute("VACUUM ANALYZE")


def built_read_store(
    database_url: str, options: argparse.Namespace, more: str
) -> tuple[dict[str, str], str]:
    """This generated store (``options.events``, ``.datasets``, ``.reuse``) in
    ``database_url``: its server environment and a read token (bench/marquez.py too)."""
    return built_store(
        database_url,
        lambda: build(database_url, options),
        f"{options.events:,} events, {options.datasets:,} datasets, {more}",
        options.reuse,
    )


def cursor_at(position: int) -> str:
    return base64.b64encode(f"p={position}".encode()).decode()


def _hours_ago(hours: int) -> str:
    return quote((datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="seconds"))


def history_scenarios(options: argparse.Namespace, rng: random.Random) -> dict[str, list[str]]:
    """Requests about the long-history region: its edges carry --runs-per-edge runs each."""
    n, hours, region = options.requests, options.runs_per_edge, options.history_datasets
    with psycopg.connect(options.database) as connection:
        runs = connection.execute(
            "SELECT r.job_id, r.id FROM catalog_run r WHERE r.run_id_text LIKE 'h:%%' "
            "ORDER BY md5(r.id::text) LIMIT %s",
            [n],
        ).fetchall()
    nodes = [f"dataset:{rng.randint(1, region)}" for _ in range(n)]
    graph = "/api/v1/lineage/graph?direction=both&depth=5&max_nodes=500&node="
    return {
        "history: graph (depth 5)": [graph + node for node in nodes],
        "history: graph as_of": [
            f"{graph}{node}&as_of={_hours_ago(rng.randint(1, hours))}" for node in nodes
        ],
        "history: graph since": [
            f"{graph}{node}&since={_hours_ago(rng.randint(1, hours))}" for node in nodes
        ],
        "history: diff": [
            f"/api/v1/lineage/diff?direction=both&depth=5&max_nodes=500&node={node}"
            f"&from={_hours_ago(rng.randint(hours // 2, hours))}"
            f"&to={_hours_ago(rng.randint(1, hours // 2))}"
            for node in nodes
        ],
        "history: dataset detail": [f"/api/v1/datasets/{node[8:]}" for node in nodes],
        "history: job runs, first page": [f"/api/v1/jobs/{job}/runs?limit=50" for job, _ in runs],
        "history: job runs, deep page": [
            f"/api/v1/jobs/{job}/runs?limit=50&cursor={cursor_at(run)}" for job, run in runs
        ],
    }


# The small store of issue 42: a few hundred datasets, where a request's fixed cost, not
# the walk, decides its time.
SMALL = {"events": 20_000, "datasets": 480, "history_datasets": 10, "runs_per_edge": 50}


def against_bare(
    options: argparse.Namespace, rng: random.Random
) -> dict[str, list[bare_reads.Pair]]:
    """Issue 42's reads, each request with its bare-SQL equivalent (bench/bare_reads.py)."""
    n, datasets = options.requests, options.datasets
    graph = "/api/v1/lineage/graph?direction=both&depth=5&max_nodes=500&node="
    roots = [rng.randint(1, datasets) for _ in range(n)]
    # Jobs that have lineage: the jobs of the edges out of random datasets.
    with psycopg.connect(options.database) as connection:
        jobs = bare_reads.jobs_out_of(connection, roots)
    starts = bare_reads.job_starts(options.database, sorted(set(jobs)))
    words = [f"table_{root}" if i % 2 else f"tabel_{root}" for i, root in enumerate(roots)]
    positions = [rng.randint(40_000, 60_000) for _ in range(n)]
    marquez = "/marquez/api/v1/lineage?depth=5&nodeId="
    return {
        "graph, dataset root": [
            bare_reads.Pair(
                f"{graph}dataset:{root}",
                bare_reads.BARE_WALK,
                bare_reads.walk_values([root], 5, 500),
            )
            for root in roots
        ],
        "graph, job root": [
            bare_reads.Pair(
                f"{graph}job:{job}",
                bare_reads.BARE_WALK,
                bare_reads.walk_values(starts[job], 5, 500, first=1),
            )
            for job in jobs
        ],
        "dataset detail": [
            bare_reads.Pair(f"/api/v1/datasets/{root}", bare_reads.BARE_DETAIL, {"id": root})
            for root in roots
        ],
        "search": [
            bare_reads.Pair(
                f"/api/v1/search?q={word}",
                bare_reads.BARE_SEARCH,
                bare_reads.search_values(word),
                bare_reads.SEARCH_SETTINGS,
            )
            for word in words
        ],
        "runs, deep cursor page": [
            bare_reads.Pair(
                f"/api/v1/runs?limit=50&cursor={cursor_at(position)}",
                bare_reads.BARE_RUNS,
                {"position": position},
            )
            for position in positions
        ],
        "marquez /lineage (depth 5)": [
            bare_reads.Pair(
                marquez
                + quote(f"dataset:postgres://db{root % 20}:5432:schema_{root % 50}.table_{root}"),
                bare_reads.BARE_MARQUEZ_WALK,
                bare_reads.walk_values([root], 5, 200),
            )
            for root in roots
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=1_000_000, datasets=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument(
        "--workers", type=int, help="web server processes (default: config/server.py's)"
    )
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    parser.add_argument("--database", default=DATABASE, help="the scratch database (made anew)")
    parser.add_argument(
        "--small", action="store_true", help=f"issue 42's small store: {SMALL} (overrides those)"
    )
    parser.add_argument(
        "--bare-only",
        action="store_true",
        help="only the reads beside their bare SQL, not the other scenarios",
    )
    options = parser.parse_args()
    if options.small:
        for name, value in SMALL.items():
            setattr(options, name, value)
    env, token = built_read_store(
        options.database, options, f"{3 * options.datasets:,} edges in {options.database}"
    )
    rng = random.Random(11)
    n = options.requests
    compared = against_bare(options, rng)
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
    scenarios.update(history_scenarios(options, rng))
    with running_server(env, workers=options.workers, start_seconds=180.0) as url:
        layout = f"{options.workers} workers" if options.workers else "the shipped layout"
        bare_reads.print_against_bare(url, token, options.database, compared, f"with {layout}")
        if not options.bare_only:
            print_latencies(url, token, scenarios, f"with {layout}")


if __name__ == "__main__":
    main()

"""Each read of bench/read.py beside its bare-SQL equivalent, measured in the same run.

Issue 42 asks for every read's p95 against what the machine itself can do: the same answer
from PostgreSQL with nothing of ours in between (no HTTP, no Django, no DRF, no JSON). The
bare equivalents here are plain SQL sent by one psycopg connection from this process over
the same loopback, each request's rows fetched whole:

- the graph: the issue's bare walk, a recursive CTE over the lineage-edge table both ways,
  depth 5, at most 500 nodes, with dataset and job names joined (``BARE_WALK``); from a job
  root it starts from the datasets the job reads and writes;
- dataset detail: the dataset's row, its aliases, its fields, its jobs with their names and
  run counts, the column edges into it and the latest runs' facts about it;
- search: trigram hits on alias and job names, best first;
- runs: a keyset page of runs, every column an item shows, with their jobs' names and their
  parents' runIds;
- Marquez's ``/lineage``: the bare walk at the mount's depth (10) and node budget (200),
  the nodes' whole rows joined.

The HTTP request and its bare equivalent are timed alternately, request by request, so a
change in the machine's load falls on both: the ratio is p95 against p95 of one run.
"""

import http.client
import os
import time
from dataclasses import dataclass
from typing import Any

import psycopg

from bench.common import percentile, timed

# The bare walk: both directions from %(start)s (dataset ids at depth %(first)s),
# UNION per direction so cycles end at the depth bound, each direction's rows capped as the
# service caps them, then the nearest %(nodes)s datasets with their names and the edges
# among them with their jobs' names.
BARE_WALK = """
WITH RECURSIVE up(id, depth) AS (
    SELECT unnest(%(start)s::bigint[]), %(first)s::int
  UNION
    SELECT e.source_id, u.depth + 1 FROM up u
    JOIN catalog_lineage_edge e ON e.target_id = u.id WHERE u.depth < %(depth)s
), down(id, depth) AS (
    SELECT unnest(%(start)s::bigint[]), %(first)s::int
  UNION
    SELECT e.target_id, d.depth + 1 FROM down d
    JOIN catalog_lineage_edge e ON e.source_id = d.id WHERE d.depth < %(depth)s
), reached AS (
    SELECT * FROM (SELECT * FROM up LIMIT %(rows)s) u
    UNION ALL SELECT * FROM (SELECT * FROM down LIMIT %(rows)s) d
), nodes AS MATERIALIZED (
    SELECT id, min(depth) AS depth FROM reached GROUP BY id
    ORDER BY min(depth), id LIMIT %(nodes)s
)
SELECT n.id, n.depth, d.namespace, d.name, NULL::bigint, NULL::text, NULL::text /*row*/
FROM nodes n JOIN catalog_dataset d ON d.id = n.id
UNION ALL
SELECT e.source_id, e.target_id, NULL, NULL, e.job_id, j.namespace, j.name
FROM catalog_lineage_edge e JOIN catalog_job j ON j.id = e.job_id
WHERE e.source_id IN (SELECT id FROM nodes) AND e.target_id IN (SELECT id FROM nodes)
"""
# Marquez's nodes are whole rows: the same walk with every column of the datasets.
BARE_MARQUEZ_WALK = BARE_WALK.replace("NULL::text /*row*/", "d::text")

BARE_JOB_START = (
    "SELECT array_agg(DISTINCT dataset_id) FROM catalog_job_edge WHERE job_id = %(job)s"
)

# The detail's rows: the dataset, its aliases, its fields, its jobs' links with their names
# and their job edges' run counts, the column edges into it with their sources' names, and
# the latest runs' facts about it with their runs and jobs (ADR 0110: before, the bare
# detail had neither the counts, the column lineage nor the run facts the answer shows).
BARE_DETAIL = """
SELECT d.id, d.namespace, d.name, d.description, d.facets::text, d.tags::text, d.owners::text
FROM catalog_dataset d WHERE d.id = %(id)s
UNION ALL SELECT a.id, a.namespace, a.name, a.reason, a.reason_detail, a.first_seen::text,
        a.last_seen::text
FROM catalog_dataset_alias a WHERE a.dataset_id = %(id)s
UNION ALL SELECT f.ordinal, f.name, f.type, f.description, NULL, NULL, NULL
FROM catalog_dataset_field f WHERE f.dataset_id = %(id)s
UNION ALL (SELECT j.id, j.namespace, j.name, jd.direction,
        COALESCE(e.run_count, 0) || '/' || COALESCE(e.completed_run_count, 0),
        jd.first_seen::text, jd.last_seen::text
FROM catalog_dataset_alias a JOIN catalog_job_dataset jd ON jd.alias_id = a.id
JOIN catalog_job j ON j.id = jd.job_id
LEFT JOIN catalog_job_edge e
  ON e.job_id = jd.job_id AND e.dataset_id = %(id)s AND e.direction = jd.direction
WHERE a.dataset_id = %(id)s LIMIT 200)
UNION ALL (SELECT c.id, s.namespace, s.name, c.source_field, c.target_field,
        c.first_seen::text, c.last_seen::text
FROM catalog_column_lineage_edge c JOIN catalog_dataset s ON s.id = c.source_id
WHERE c.target_id = %(id)s LIMIT 200)
UNION ALL (SELECT f.run_id, r.run_uuid::text, j.name, f.direction, f.name, f.value::text, NULL
FROM catalog_dataset_alias a JOIN catalog_run_dataset_facet f ON f.alias_id = a.id
JOIN catalog_run r ON r.id = f.run_id JOIN catalog_job j ON j.id = r.job_id
WHERE a.dataset_id = %(id)s ORDER BY f.run_id DESC LIMIT 50)
"""

BARE_SEARCH = """
SELECT * FROM (
  (SELECT 'dataset' AS type, a.dataset_id AS id, a.namespace, a.name,
          word_similarity(%(q)s, a.name) AS score
   FROM catalog_dataset_alias a WHERE %(q)s <%% a.name LIMIT 500)
  UNION ALL
  (SELECT 'job', j.id, j.namespace, j.name, word_similarity(%(q)s, j.name)
   FROM catalog_job j WHERE %(q)s <%% j.name LIMIT 500)
) hits ORDER BY score DESC, type, id LIMIT 20
"""

# Every column a run item shows, with its job's names and its parent's runId (ADR 0110:
# before, eleven of them and no parent).
BARE_RUNS = """
SELECT r.run_uuid, r.run_id_text, r.state, r.state_time, r.started_at, r.ended_at, r.duration,
       r.nominal_start_time, r.nominal_end_time, r.error_message, r.is_streaming,
       r.is_placeholder, r.tags::text, r.shares_run_id, r.first_event_time, r.last_event_time,
       r.lineage_edges_cut, p.run_uuid, j.id, j.namespace, j.name
FROM catalog_run r JOIN catalog_job j ON j.id = r.job_id
LEFT JOIN catalog_run p ON p.id = r.parent_run_id
WHERE r.id < %(position)s ORDER BY r.id DESC LIMIT 51
"""


@dataclass(frozen=True)
class Pair:
    """One request's HTTP path and its bare SQL with its values."""

    path: str
    sql: str
    values: dict[str, Any]


def walk_values(start: list[int], depth: int, nodes: int, first: int = 0) -> dict[str, Any]:
    """BARE_WALK's values: ``start`` at depth ``first``, rows capped per direction as the
    service caps them ((max_nodes + 1) x (depth + 1))."""
    rows = (nodes + 1) * (depth + 1)
    return {"start": start, "first": first, "depth": depth, "nodes": nodes, "rows": rows}


def _time_sql(connection: psycopg.Connection, pair: Pair) -> float:
    started = time.perf_counter()
    connection.execute(pair.sql, pair.values).fetchall()
    return (time.perf_counter() - started) * 1000


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes), to print beside every figure."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def print_against_bare(
    url: str, token: str, database_url: str, scenarios: dict[str, list[Pair]], layout: str
) -> dict[str, float]:
    """Each scenario's requests over one keep-alive connection, each followed by its bare
    SQL over one psycopg connection, after ten warm-up pairs; prints p50 and p95 of both
    and the ratio of the p95s (with the load average), and returns the ratios by name."""
    host, port = url.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(port), timeout=60)
    count = len(next(iter(scenarios.values()), []))
    print(f"\n{count} sequential keep-alive requests each, each beside its bare SQL, {layout}")
    print(
        f"{'request':34} {'p50 ms':>8} {'p95 ms':>8} {'bare p50':>9} {'bare p95':>9} "
        f"{'p95/bare':>9}  load"
    )
    ratios: dict[str, float] = {}
    with psycopg.connect(database_url, autocommit=True) as connection:
        for name, pairs in scenarios.items():
            for pair in pairs[:10]:  # warm-up: caches, connections, plans
                timed(client, pair.path, token)
                _time_sql(connection, pair)
            served: list[float] = []
            bare: list[float] = []
            for pair in pairs:
                served.append(timed(client, pair.path, token))
                bare.append(_time_sql(connection, pair))
            p95, bare_p95 = percentile(served, 0.95), percentile(bare, 0.95)
            ratios[name] = p95 / bare_p95
            print(
                f"{name:34} {percentile(served, 0.5):8.1f} {p95:8.1f} "
                f"{percentile(bare, 0.5):9.1f} {bare_p95:9.1f} {ratios[name]:8.1f}x  {load()}",
                flush=True,
            )
    return ratios


def jobs_out_of(connection: psycopg.Connection, datasets: list[int]) -> list[int]:
    """A job that reads each of ``datasets`` (one of its edges' jobs): job roots that have
    lineage, drawn from random dataset roots."""
    return [
        connection.execute(
            "SELECT job_id FROM catalog_lineage_edge WHERE source_id = %s LIMIT 1", [dataset]
        ).fetchone()[0]
        for dataset in datasets
    ]


def job_starts(database_url: str, jobs: list[int]) -> dict[int, list[int]]:
    """Each job's datasets (read or written): where the bare walk from a job root starts."""
    with psycopg.connect(database_url) as connection:
        return {
            job: connection.execute(BARE_JOB_START, {"job": job}).fetchone()[0] or []
            for job in jobs
        }

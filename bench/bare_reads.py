"""Each read of bench/read.py beside its bare-SQL equivalent, measured in the same run.

Issue 42 asks for every read's p95 against what the machine itself can do: the same answer
from PostgreSQL with nothing of ours in between (no HTTP, no Django, no DRF, no JSON). The
bare equivalents here are plain SQL sent by one psycopg connection from this process over
the same loopback, each request's rows fetched whole:

- the graph: the issue's bare walk, a recursive CTE over the lineage-edge table both ways,
  depth 5, at most 500 nodes, with dataset and job names joined (``BARE_WALK``); from a job
  root it starts from the datasets the job reads and writes;
- dataset detail: the dataset's row unless it is retired, its aliases with their rules, its
  fields, its jobs with their names and run counts, the observed and declared column edges
  into it, the count of those outside its schema and the latest runs' facts about it (until
  ADR 0124 neither the retirement, the rules, the declared edges nor the count);
- search: every kind of hit search answers (trigram, full-text, tag, owner), the best per
  dataset or job with its name, ranked, a page and one more row; until ADR 0122 only the alias
  and job trigram hits, at pg_trgm's default threshold (0.6, not search's 0.45), 20 rows and
  no exact-name bonus: on the small store a third of search's hits for a typo query. It leaves
  out what search hides or demotes by the store's rules (retirement, the phantom penalty);
  the bench's stores hold neither;
- runs: a keyset page of runs, every column an item shows, with their jobs' names and their
  parents' runIds;
- Marquez's ``/lineage``: the bare walk at the mount's depth (5 asked) and node budget
  (200), then the nodes the answer shows: the datasets every drawn job reads and writes
  (past the walk too: thousands at the 1M store), each node's whole row (a job's parent's
  name), the datasets' fields, newest writes and column edges in, the jobs' latest runs and
  inputs and outputs by name. Until ADR 0118 it read the walk's datasets' rows only, a
  fifteenth of the nodes the answer draws at the 1M store and none of their facts.

The HTTP request and its bare equivalent are timed alternately, request by request, so a
change in the machine's load falls on both: the ratio is p95 against p95 of one run.
"""

import http.client
import json
import os
import re
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
SELECT n.id, n.depth, d.namespace, d.name, NULL::bigint, NULL::text, NULL::text
FROM nodes n JOIN catalog_dataset d ON d.id = n.id
UNION ALL
SELECT e.source_id, e.target_id, NULL, NULL, e.job_id, j.namespace, j.name
FROM catalog_lineage_edge e JOIN catalog_job j ON j.id = e.job_id
WHERE e.source_id IN (SELECT id FROM nodes) AND e.target_id IN (SELECT id FROM nodes)
"""
# Marquez's /lineage: the same walk, then what the answer shows of it (ADR 0118). Marquez
# draws each drawn job with every dataset it reads and writes (catalog_job_edge, at most
# %(links)s pairs), also past the walk: thousands at the 1M store. Each node is its whole
# row (a job with its parent's name), each dataset with its schema fields, its newest
# completed write and the column edges into it (with their sources' names), each job with
# its latest started run and what it reads and writes by name. Before ADR 0118 the bare
# walk read the walk's datasets' rows only.
BARE_MARQUEZ_WALK = (
    BARE_WALK.split("nodes AS MATERIALIZED")[0]
    + """candidates AS MATERIALIZED (
    SELECT id, min(depth) AS depth, row_number() OVER (ORDER BY min(depth), id) AS rank
    FROM reached GROUP BY id ORDER BY min(depth), id LIMIT %(nodes)s
), job_ranks AS MATERIALIZED (  -- a job is drawn once both ends of one of its edges are
    SELECT e.job_id, min(GREATEST(s.rank, t.rank)) AS rank
    FROM catalog_lineage_edge e JOIN candidates s ON s.id = e.source_id
    JOIN candidates t ON t.id = e.target_id GROUP BY e.job_id
), budget AS (  -- the node budget counts datasets and jobs, as the mount's does
    SELECT max(rank) AS rank FROM (
        SELECT c.rank, c.rank + sum(COALESCE(j.n, 0)) OVER (ORDER BY c.rank) AS used
        FROM candidates c
        LEFT JOIN (SELECT rank, count(*) AS n FROM job_ranks GROUP BY rank) j ON j.rank = c.rank
    ) counted WHERE used <= %(nodes)s
), nodes AS MATERIALIZED (
    SELECT id FROM candidates WHERE rank <= (SELECT rank FROM budget)
), jobs AS MATERIALIZED (
    SELECT job_id AS id FROM job_ranks WHERE rank <= (SELECT rank FROM budget)
), links AS MATERIALIZED (
    SELECT je.job_id, je.dataset_id, je.direction FROM catalog_job_edge je
    WHERE je.job_id = ANY(ARRAY(SELECT id FROM jobs))
    ORDER BY je.job_id, je.dataset_id, je.direction LIMIT %(links)s
), datasets AS MATERIALIZED (
    SELECT id FROM nodes UNION SELECT dataset_id FROM links
)
SELECT 0, d.id, d::text, NULL::text, NULL::text FROM catalog_dataset d
WHERE d.id = ANY(ARRAY(SELECT id FROM datasets))
UNION ALL
SELECT 1, j.id, j::text, p.namespace, p.name FROM catalog_job j
LEFT JOIN catalog_job p ON p.id = j.parent_id WHERE j.id = ANY(ARRAY(SELECT id FROM jobs))
UNION ALL
SELECT 2, l.job_id, l.dataset_id::text, l.direction, NULL FROM links l
UNION ALL
SELECT 3, f.dataset_id, f.name, f.type, f.description FROM catalog_dataset_field f
WHERE f.dataset_id = ANY(ARRAY(SELECT id FROM datasets))
UNION ALL
(SELECT DISTINCT ON (a.dataset_id) 4, a.dataset_id, rd.last_seen::text, r.run_uuid::text, NULL
 FROM catalog_run_dataset rd JOIN catalog_dataset_alias a ON a.id = rd.alias_id
 JOIN catalog_run r ON r.id = rd.run_id
 WHERE a.dataset_id = ANY(ARRAY(SELECT id FROM datasets)) AND rd.direction = 'output'
   AND r.state = 'COMPLETE'
 ORDER BY a.dataset_id, rd.last_seen DESC, rd.id DESC)
UNION ALL
(SELECT 5, c.target_id, s.namespace || ':' || s.name, c.source_field, c.target_field
 FROM catalog_column_lineage_edge c JOIN catalog_dataset s ON s.id = c.source_id
 WHERE c.target_id = ANY(ARRAY(SELECT id FROM datasets))
 LIMIT 200 * (SELECT count(*) FROM datasets))
UNION ALL
SELECT 6, j.id, r::text, NULL, NULL FROM jobs j CROSS JOIN LATERAL (
    SELECT * FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL
    ORDER BY r.started_at DESC, r.id DESC LIMIT 1) r
UNION ALL
(SELECT 7, jd.job_id, jd.direction, d.namespace, d.name FROM catalog_job_dataset jd
 JOIN catalog_dataset_alias a ON a.id = jd.alias_id JOIN catalog_dataset d ON d.id = a.dataset_id
 WHERE jd.job_id = ANY(ARRAY(SELECT id FROM jobs)) LIMIT 200 * (SELECT count(*) FROM jobs))
"""
)

BARE_JOB_START = (
    "SELECT array_agg(DISTINCT dataset_id) FROM catalog_job_edge WHERE job_id = %(job)s"
)

# Each direction's job links, as the detail reads them (800 each before it merges them per job).
_BARE_JOB_LINKS = """
UNION ALL (SELECT j.id, j.namespace, j.name, jd.direction,
        concat_ws(' ', jd.declared, COALESCE(e.run_count, 0), COALESCE(e.completed_run_count, 0)),
        jd.first_seen::text, jd.last_seen::text
FROM catalog_dataset_alias a JOIN catalog_job_dataset jd ON jd.alias_id = a.id
JOIN catalog_job j ON j.id = jd.job_id
LEFT JOIN catalog_job_edge e
  ON e.job_id = jd.job_id AND e.dataset_id = %(id)s AND e.direction = jd.direction
WHERE a.dataset_id = %(id)s AND jd.direction = '{direction}' LIMIT 800)
"""

# The detail's rows: the dataset (hidden while it is retired: one probe of the active
# retirement, the reader's answer), its aliases with their rules' slugs, its fields, each
# direction's job links (800, as the answer reads them before merging them per job) with
# their names and their job edges' run counts, the observed and the declared column edges
# into it with their sources' names and what the answer shows of them, the count of its
# column edges outside its schema, and each alias's latest runs' facts with their runs and
# jobs. Only a dataset with column edges reads their currency too (one more statement in
# the answer; none in the bench's stores), which this leaves out. Until ADR 0124 it read
# neither the retirement, the rules, the declared column edges nor the outside-schema
# count, and half of a link's and a column edge's values (ADR 0110 had added the counts,
# the observed column edges and the facts).
BARE_DETAIL = (
    """
SELECT d.id, d.namespace, d.name, d.description, d.facets::text, d.tags::text || d.owners::text,
       concat_ws(' ', d.lifecycle_state, d.is_dropped, d.first_seen, d.last_seen,
                 d.lifecycle_changed_at)
FROM catalog_dataset d WHERE d.id = %(id)s AND NOT EXISTS (
    SELECT 1 FROM catalog_retirement rt
    WHERE rt.kind = 1 AND rt.object_id = d.id AND rt.restored_at IS NULL)
UNION ALL SELECT a.id, a.namespace, a.name, a.reason, a.reason_detail,
        concat_ws(' ', a.reason_event_id, r.slug), concat_ws(' ', a.first_seen, a.last_seen)
FROM catalog_dataset_alias a LEFT JOIN catalog_alias_rule r ON r.id = a.reason_rule_id
WHERE a.dataset_id = %(id)s
UNION ALL SELECT f.ordinal, f.name, f.type, f.description, NULL, NULL, NULL
FROM catalog_dataset_field f WHERE f.dataset_id = %(id)s
"""
    + "".join(_BARE_JOB_LINKS.format(direction=direction) for direction in ("output", "input"))
    + """UNION ALL (SELECT c.id, s.namespace, s.name, c.source_field, c.target_field,
        concat_ws(' ', c.job_id, c.transformation_type, c.transformation_subtype,
                  c.transformation_description, c.masking, c.field_transformation_type,
                  c.field_transformation_description, c.dataset_level, c.run_count, r.run_uuid),
        concat_ws(' ', c.first_seen, c.last_seen)
FROM catalog_column_lineage_edge c JOIN catalog_dataset s ON s.id = c.source_id
LEFT JOIN catalog_run r ON r.id = c.last_run_id
WHERE c.target_id = %(id)s LIMIT 200)
UNION ALL (SELECT c.id, s.namespace, s.name, c.source_field, c.target_field,
        concat_ws(' ', c.job_id, c.transformation_type, c.transformation_subtype,
                  c.transformation_description, c.masking, c.field_transformation_type,
                  c.field_transformation_description, c.dataset_level),
        l.declared_at::text
FROM catalog_dataset_alias ta JOIN catalog_static_column_lineage c ON c.target_alias_id = ta.id
JOIN catalog_static_lineage l ON l.job_id = c.job_id
JOIN catalog_dataset_alias sa ON sa.id = c.source_alias_id
JOIN catalog_dataset s ON s.id = sa.dataset_id
WHERE ta.dataset_id = %(id)s LIMIT 200)
UNION ALL SELECT count(*), NULL, NULL, NULL, NULL, NULL, NULL
FROM catalog_column_lineage_edge c WHERE c.target_id = %(id)s AND NOT c.dataset_level
  AND EXISTS (SELECT 1 FROM catalog_dataset_field f WHERE f.dataset_id = c.target_id)
  AND NOT EXISTS (SELECT 1 FROM catalog_dataset_field f
                  WHERE f.dataset_id = c.target_id AND f.name = c.target_field)
UNION ALL SELECT x.run_id, r.run_uuid::text, j.name, x.direction, x.name, x.value::text, NULL
FROM catalog_dataset_alias a CROSS JOIN LATERAL (
    SELECT f.run_id, f.direction, f.name, f.value FROM catalog_run_dataset_facet f
    WHERE f.alias_id = a.id ORDER BY f.run_id DESC LIMIT 100) x
JOIN catalog_run r ON r.id = x.run_id JOIN catalog_job j ON j.id = r.job_id
WHERE a.dataset_id = %(id)s
"""
)

# Every kind of hit search answers (ADR 0122; until then only the alias and job trigram hits,
# at pg_trgm's default threshold of 0.6 and 20 rows, the alias's name for a dataset's): the
# trigram hits on alias, job and column names at search's threshold (SEARCH_SETTINGS), with
# the exact-name bonus; the full-text hits on alias and job words and dataset descriptions;
# the tag and owner hits; each capped at 500; the best hit per dataset or job, with the
# dataset's own name; the first page and one row more (limit 50 + 1).
BARE_SEARCH = """
SELECT h.type, h.id, h.field, h.value, h.score,
       COALESCE(d.namespace, h.namespace), COALESCE(d.name, h.name)
FROM (SELECT DISTINCT ON (type, id) * FROM (
  (SELECT 'dataset' AS type, a.dataset_id AS id, 'alias' AS field,
          a.namespace || ' ' || a.name AS value, NULL AS namespace, NULL AS name,
          word_similarity(%(q)s, a.name) + CASE WHEN lower(a.name) = lower(%(q)s)
            OR right(lower(a.name), length(%(q)s) + 1) IN ('.' || lower(%(q)s), '/' || lower(%(q)s))
            THEN 0.5 ELSE 0 END AS score
   FROM catalog_dataset_alias a WHERE %(q)s <%% a.name AND a.dataset_id IS NOT NULL LIMIT 500)
  UNION ALL
  (SELECT 'dataset', a.dataset_id, 'alias', a.namespace || ' ' || a.name, NULL, NULL,
          0.5 + ts_rank(to_tsvector('simple', regexp_replace(a.namespace || ' ' || a.name,
            '[^[:alnum:]]+', ' ', 'g')), to_tsquery('simple', %(words)s))
   FROM catalog_dataset_alias a
   WHERE to_tsvector('simple', regexp_replace(a.namespace || ' ' || a.name, '[^[:alnum:]]+', ' ',
     'g')) @@ to_tsquery('simple', %(words)s) AND a.dataset_id IS NOT NULL LIMIT 500)
  UNION ALL
  (SELECT 'job', j.id, 'name', j.namespace || ' ' || j.name, j.namespace, j.name,
          word_similarity(%(q)s, j.name) + CASE WHEN lower(j.name) = lower(%(q)s)
            OR right(lower(j.name), length(%(q)s) + 1) IN ('.' || lower(%(q)s), '/' || lower(%(q)s))
            THEN 0.5 ELSE 0 END
   FROM catalog_job j WHERE %(q)s <%% j.name LIMIT 500)
  UNION ALL
  (SELECT 'job', j.id, 'words', j.namespace || ' ' || j.name, j.namespace, j.name,
          0.45 + ts_rank(to_tsvector('simple', regexp_replace(j.namespace || ' ' || j.name,
            '[^[:alnum:]]+', ' ', 'g')) || to_tsvector('simple', j.description),
            to_tsquery('simple', %(words)s))
   FROM catalog_job j
   WHERE (to_tsvector('simple', regexp_replace(j.namespace || ' ' || j.name, '[^[:alnum:]]+', ' ',
     'g')) || to_tsvector('simple', j.description)) @@ to_tsquery('simple', %(words)s) LIMIT 500)
  UNION ALL
  (SELECT 'dataset', d.id, 'description', left(d.description, 200), NULL, NULL,
          0.4 + ts_rank(to_tsvector('english', d.description),
            websearch_to_tsquery('english', %(q)s))
   FROM catalog_dataset d
   WHERE to_tsvector('english', d.description) @@ websearch_to_tsquery('english', %(q)s) LIMIT 500)
  UNION ALL
  (SELECT 'dataset', d.id, 'tag', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE d.tags @> %(tag)s::jsonb OR d.tags @> %(tag_value)s::jsonb LIMIT 500)
  UNION ALL
  (SELECT 'dataset', d.id, 'owner', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE d.owners @> %(owner)s::jsonb LIMIT 500)
  UNION ALL
  (SELECT 'job', j.id, 'tag', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE j.tags @> %(tag)s::jsonb OR j.tags @> %(tag_value)s::jsonb LIMIT 500)
  UNION ALL
  (SELECT 'job', j.id, 'owner', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE j.owners @> %(owner)s::jsonb LIMIT 500)
  UNION ALL
  (SELECT 'dataset', f.dataset_id, 'column', f.name, NULL, NULL,
          0.8 * word_similarity(%(q)s, f.name)
   FROM catalog_dataset_field f WHERE %(q)s <%% f.name LIMIT 500)
) hits ORDER BY type, id, score DESC, field) h
LEFT JOIN catalog_dataset d ON h.type = 'dataset' AND d.id = h.id
ORDER BY h.score DESC, h.type, h.id LIMIT 51
"""

# Sent with BARE_SEARCH in its one round trip (``Pair.settings``), as search sends its own
# (ADR 0111): the threshold its trigram hits use (a setting: the GIN index scan reads it;
# pg_trgm's default is 0.6), and the planner's costs search is planned with. Without the
# operator cost the bare statement scanned every alias and column name on the small store,
# computing each one's similarity, where search's plan reads their GIN indexes (ADR 0122).
SEARCH_SETTINGS = (
    "SET LOCAL pg_trgm.word_similarity_threshold = 0.45; SET LOCAL jit = off; "
    "SET LOCAL cpu_operator_cost = 0.25; "
)


def search_values(q: str) -> dict[str, Any]:
    """BARE_SEARCH's values for the query ``q``: every word must match, the last as a prefix;
    a tag is matched as its key or key:value, an owner by name, visible ones only."""
    words = [word for word in re.split(r"[^\w]+", q.lower()) if word]
    terms = [f"'{word}'" for word in words[:-1]] + [f"'{word}':*" for word in words[-1:]]
    key, _, value = q.partition(":")
    return {
        "q": q,
        "words": " & ".join(terms),
        "tag": json.dumps([{"key": q, "hidden": False}]),
        "tag_value": json.dumps([{"key": key, "value": value, "hidden": False}]),
        "owner": json.dumps([{"name": q, "hidden": False}]),
    }


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
    # SET LOCALs sent with the statement in one simple-protocol message, parameters bound
    # client-side (as Django sends search's), so they hold for it alone.
    settings: str = ""


def run(connection: psycopg.Connection, pair: Pair) -> list[Any]:
    """The pair's bare SQL on ``connection`` (autocommit), its rows fetched whole."""
    if not pair.settings:
        return connection.execute(pair.sql, pair.values).fetchall()
    cursor = psycopg.ClientCursor(connection)
    cursor.execute(pair.settings + pair.sql, pair.values)
    while cursor.nextset():  # past the SETs' empty results, to the statement's rows
        pass
    return cursor.fetchall()


def walk_values(start: list[int], depth: int, nodes: int, first: int = 0) -> dict[str, Any]:
    """BARE_WALK's values: ``start`` at depth ``first``, rows capped per direction as the
    service caps them ((max_nodes + 1) x (depth + 1)); and the drawn jobs' links as the
    Marquez mount caps them (20 per node, BARE_MARQUEZ_WALK)."""
    rows = (nodes + 1) * (depth + 1)
    return {
        "start": start,
        "first": first,
        "depth": depth,
        "nodes": nodes,
        "rows": rows,
        "links": 20 * nodes,
    }


def _time_sql(connection: psycopg.Connection, pair: Pair) -> float:
    started = time.perf_counter()
    run(connection, pair)
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

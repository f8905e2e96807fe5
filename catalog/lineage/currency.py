"""Is an edge current? Whether the producing job's latest completed run still produced it.

Edges keep history (invariant 5): a job whose latest run stopped reading a table keeps its
old input edge, with the last run that produced it. A reader needs to tell the two apart
at a glance, so every table edge (``JobLineageEdge``) and column edge
(``ColumnLineageEdge``) served says ``current``: true when the job's *reference run* has
a row behind it (ADR 0060); a job that has no started run has no reference, and its
edges are current. The reference run is the job's most recently started run that is a
write (``catalog.models.writes``: it completed, or it is a streaming run still RUNNING,
whose edges are current while it runs, ADR 0091), or, for a job that never had one (a
job that always fails), its most recently started run; as of T, among the runs started
by then. A stream that then completes, fails or aborts follows the same rule as a batch.

Read, not stored: it changes with every run of the job, and folding it into each edge
would rewrite all of a job's edges per run. The reads are one index probe per job
(catalog_run_job_started_idx) and, for job edges, one per edge (the edge-run unique
index), for the few hundred edges a bounded graph draws; column edges, which can be
thousands, are one statement that probes the facts' unique index by its full key, per
edge and alias pair (ADR 0176).
"""

from datetime import datetime
from typing import Any

from django.db import connection

from catalog.models.writes import window_start_sql, write_sql
from core.sql_arrays import bigint_array

# Each job's reference run, then the edges it has a row behind; one statement.
_REFERENCE = """
WITH reference(job_id, run_id) AS MATERIALIZED (  -- once per job, not per edge
    SELECT j.id, COALESCE(
        (SELECT r.id FROM catalog_run r WHERE r.job_id = j.id AND {writes}
           AND r.started_at IS NOT NULL {as_of}
         ORDER BY r.started_at DESC NULLS LAST, r.run_uuid DESC LIMIT 1),
        (SELECT r.id FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL
           {as_of}
         ORDER BY r.started_at DESC NULLS LAST, r.run_uuid DESC LIMIT 1))
    FROM unnest(%(job_set)s::bigint[]) AS j(id)
)
SELECT k.edge_id FROM unnest(%(edges)s::bigint[], %(jobs)s::bigint[]) AS k(edge_id, job_id)
JOIN reference ref ON ref.job_id = k.job_id
""".replace("{writes}", write_sql("r"))
# The reference runs alone, for a statement that goes on from them (column edges).
_REFERENCE_RUNS = _REFERENCE.split("\nSELECT k.edge_id", 1)[0]
# A job without a started run has no reference: nothing says its edges went stale.

# A reference run that is a write (it completed, or a stream's running run) makes current
# only what it wrote (``completed``: the row rule of catalog.models.writes), not the outputs its
# START planned and its write events did not name; a job whose runs never wrote has
# attempts only, and the latest run's are current.
#
# The reference run's own row is read by its key, and only for an edge-run row that did not
# complete: joined inside the EXISTS, the planner turned it into a hashed subplan that read
# the whole run table on every graph (101,500 rows for 665 edges on bench/read.py's small
# store, most of the request's database time; issue 42).
_JOB_EDGES = """
WHERE ref.run_id IS NULL OR EXISTS (SELECT 1 FROM catalog_job_edge_run er
              WHERE er.edge_id = k.edge_id AND er.run_id = ref.run_id
                AND (er.completed
                     OR NOT (SELECT {writes} FROM catalog_run rr WHERE rr.id = ref.run_id)))
""".replace("{writes}", write_sql("rr"))

# A column edge is current when a fact of the reference run maps to it: same key, its
# aliases naming the edge's datasets; for a snapshot run, a fact of its newest window
# (ADR 0091), whose start is read once per reference run, by its key, not per fact. The
# edges are read by key (the ANY): joined by id alone, the planner hashed the whole edge
# table for a page of changes' 713 readers, half the statement's CPU (docs/benchmarks.md,
# "/changes' breaks").
#
# Each (edge, target alias, source alias) is one probe of the fact's unique index by its
# full key, a scalar subquery so the planner cannot take it apart (ADR 0176): joined to the
# facts by run and key, the planner reached them by the target-alias index and dropped
# 24,654 facts of other runs to keep 546 for a page of 500 changes (bench/changes.py). A
# probe of an earlier form (an EXISTS) took 27 s for 40,000 edges (issue 38); these bind
# all four columns (at most one row: the key is unique), and all the bench's 24,000 edges
# take 120-150 ms of backend CPU, as the join did. The windows read each reference run by
# its key: an IN over the reference runs read all 20,000 runs for 187.
_COLUMN_EDGES = """
, wanted AS MATERIALIZED (
    SELECT k.edge_id, ref.run_id, c.source_id, c.target_id, c.key_hash
    FROM unnest(%(edges)s::bigint[], %(jobs)s::bigint[]) AS k(edge_id, job_id)
    JOIN reference ref ON ref.job_id = k.job_id
    JOIN catalog_column_lineage_edge c ON c.id = k.edge_id AND c.id = ANY(%(edges)s::bigint[])
), windows AS MATERIALIZED (
    SELECT ref.run_id, (SELECT {since} FROM catalog_run wr WHERE wr.id = ref.run_id) AS since
    FROM reference ref WHERE ref.run_id IS NOT NULL
)
SELECT w.edge_id FROM wanted w WHERE w.run_id IS NULL
UNION
SELECT w.edge_id FROM wanted w
JOIN windows nw ON nw.run_id = w.run_id
JOIN catalog_dataset_alias at ON at.dataset_id = w.target_id
JOIN catalog_dataset_alias src ON src.dataset_id = w.source_id
WHERE (SELECT f.last_seen FROM catalog_column_lineage_fact f
       WHERE f.run_id = w.run_id AND f.target_alias_id = at.id AND f.source_alias_id = src.id
         AND f.key_hash = w.key_hash) >= COALESCE(nw.since, '-infinity')
""".replace("{since}", window_start_sql("wr"))


# Sent with the column edges' statement in one round trip (one simple-protocol query:
# Django's psycopg cursor binds parameters client-side), so it ends with the statement's
# implicit transaction, or with a caller's transaction (as search's, ADR 0111). A probe per
# edge is costed at a few units a row, and past jit_above_cost (thousands of edges)
# compiling the plan took 3.1 s for 24,000 edges the statement reads in 0.15 s (ADR 0176).
NO_JIT = "SET LOCAL jit = off;\n"


# The same test as a column of a statement that reads job edges ``je`` beside ``reference
# ref`` (``reference_runs``): catalog.lineage.job_edges reads the drawn edges and whether
# each is current in one statement, the reference runs a CTE of it (ADR 0104).
CURRENT_COLUMN = """(ref.run_id IS NULL OR EXISTS (SELECT 1 FROM catalog_job_edge_run er
              WHERE er.edge_id = je.id AND er.run_id = ref.run_id
                AND (er.completed
                     OR NOT (SELECT {writes} FROM catalog_run rr WHERE rr.id = ref.run_id))))
""".replace("{writes}", write_sql("rr"))


def reference_runs(job_ids: set[int], as_of: datetime | None) -> tuple[str, dict[str, Any]]:
    """``WITH reference(job_id, run_id) AS (...)``: each of ``job_ids``' reference run (as of
    T), for a statement that goes on from it, and its values (``job_set``, ``as_of``)."""
    values: dict[str, Any] = {"job_set": bigint_array(sorted(job_ids))}
    as_of_sql = ""
    if as_of is not None:
        as_of_sql = "AND r.started_at <= %(as_of)s"
        values["as_of"] = as_of
    return _REFERENCE_RUNS.format(as_of=as_of_sql), values


def _current(
    sql: str, edges: dict[int, int], as_of: datetime | None, head: str = _REFERENCE
) -> set[int]:
    if not edges:
        return set()
    ordered = sorted(edges.items())
    values: dict[str, Any] = {
        "edges": bigint_array(edge for edge, _ in ordered),
        "jobs": bigint_array(job for _, job in ordered),
        # Each job once: the planner then expects as many reference runs as there are
        # (a DISTINCT over the pairs' jobs made it expect one per edge, and the plan's cost,
        # tens of thousands of edges for a hundred jobs, started JIT compilation: 1.4 s).
        "job_set": bigint_array(sorted(set(edges.values()))),
    }
    as_of_sql = ""
    if as_of is not None:
        as_of_sql = "AND r.started_at <= %(as_of)s"
        values["as_of"] = as_of
    with connection.cursor() as cursor:
        cursor.execute(head.format(as_of=as_of_sql) + sql, values)
        while cursor.nextset():  # past a SET's empty result (NO_JIT), to the edges
            pass
        return {row[0] for row in cursor.fetchall()}


def current_job_edges(edges: dict[int, int], as_of: datetime | None = None) -> set[int]:
    """Of ``edges`` (job edge id → its job), those the job's reference run produced."""
    return _current(_JOB_EDGES, edges, as_of)


def current_column_edges(edges: dict[int, int], as_of: datetime | None = None) -> set[int]:
    """Of ``edges`` (column edge id → its job), those the job's reference run produced."""
    return _current(_COLUMN_EDGES, edges, as_of, NO_JIT + _REFERENCE_RUNS)

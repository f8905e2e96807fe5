"""Whether each job edge is current, kept with the edge (ADR 0138).

The graph reads, for every drawn job edge, whether it is current: whether its job's
*reference run* (``catalog.models.writes.reference_run_sql``: the newest started write,
else the newest started run) has a row behind it (``edge_current_sql``). Computed at read
time that was two index probes per job and one per edge, a fifth of the graph's backend
CPU. Derivation keeps it instead: each job keeps the reference run its edges were kept
against (``JobReference``), each edge its answer (``JobLineageEdge.current``).

What can change an edge's answer is a change of its job's reference run (a run started,
finished, moved or removed) or of the reference run's rows behind the edge. Every writer
of either calls ``keep`` in its transaction with the runs and the job edges it touched:
derivation (``job_edges.recompute_job_edges``, a steward's split too) and retention. For
each job of those runs and edges it reads the reference run anew and re-keeps only the
edges whose answer can have moved:

- the edges the caller touched (their rows changed, against the same reference);
- when the reference moved from one run to another, the edges behind either run: the
  old reference's current edges and the new one's (a removed run's edges the caller
  passes, its rows being gone);
- when it moved to or from none (every edge current), or the job was never kept, all
  of the job's edges, once.

So the cost follows the runs written, not the job's history (ADR 0025). Jobs are locked
(id order) before the reference is read: a batch deriving another run of the same job
waits, then reads it with that run committed, so neither keeps an answer the other made
stale. An edge whose answer is NULL was never kept; the graph computes it.
"""

from collections.abc import Sequence
from typing import Any

from catalog.models.writes import edge_current_sql, reference_run_sql

# The jobs by their key, each an index probe (the ids an array the planner does not look
# into): given the ids as a join, it read the whole job table, whose rows are wide (their
# facets) and often rewritten, ~30 ms a batch on bench/derive.py's store.
_LOCK_JOBS = """
SELECT j.id FROM catalog_job j
WHERE j.id = ANY(ARRAY(
    SELECT r.job_id FROM catalog_run r WHERE r.id = ANY(%(runs)s)
    UNION SELECT e.job_id FROM catalog_job_edge e WHERE e.id = ANY(%(edges)s)
    UNION SELECT unnest(%(jobs)s::bigint[])))
ORDER BY j.id FOR NO KEY UPDATE
"""

# Each job's kept reference beside the one read now; the kept one re-kept where it moved;
# the candidates' answers computed once (one probe each), written where they changed.
_KEEP = (
    """
WITH j AS MATERIALIZED (
    SELECT j.id, k.run_id AS old, k.job_id IS NOT NULL AS kept, """
    + reference_run_sql("j.id")
    + """ AS new
    FROM unnest(%(jobs)s::bigint[]) AS j(id)
    LEFT JOIN catalog_job_reference k ON k.job_id = j.id
), moved AS (
    INSERT INTO catalog_job_reference (job_id, run_id)
    SELECT j.id, j.new FROM j WHERE NOT j.kept OR j.old IS DISTINCT FROM j.new
    ON CONFLICT (job_id) DO UPDATE SET run_id = EXCLUDED.run_id
), candidate AS (
    SELECT e.id FROM unnest(%(edges)s::bigint[]) AS e(id)
    UNION
    SELECT er.edge_id FROM j JOIN catalog_job_edge_run er ON er.run_id IN (j.old, j.new)
    WHERE j.kept AND j.old <> j.new
    UNION
    SELECT e.id FROM j JOIN catalog_job_edge e ON e.job_id = j.id
    WHERE NOT j.kept OR ((j.old IS NULL) <> (j.new IS NULL))
), answer AS MATERIALIZED (
    SELECT e.id, """
    + edge_current_sql("e.id", "j.new")
    + """ AS current
    FROM candidate c JOIN catalog_job_edge e ON e.id = c.id JOIN j ON j.id = e.job_id
)
UPDATE catalog_job_edge e SET current = a.current FROM answer a
WHERE e.id = a.id AND e.current IS DISTINCT FROM a.current
"""
)


def lock_jobs(
    cursor: Any, runs: Sequence[int], edges: Sequence[int], jobs: Sequence[int]
) -> list[int]:
    """Lock the jobs of ``runs``, of ``edges`` and ``jobs`` (id order); their ids."""
    values = {"runs": sorted(runs), "edges": sorted(edges), "jobs": sorted(jobs)}
    cursor.execute(_LOCK_JOBS, values)
    return [job for (job,) in cursor.fetchall()]


def keep(cursor: Any, runs: Sequence[int], edges: Sequence[int], jobs: Sequence[int] = ()) -> None:
    """Re-keep the currency of the jobs of ``runs``, of ``edges`` and ``jobs`` (locked, their
    reference run read anew): of ``edges`` and of the edges the move of a reference run can
    change. ``edges``: every job edge whose rows of the caller's runs changed (gained,
    lost, completed), including those of runs it removed."""
    if not (runs or edges or jobs):
        return
    locked = lock_jobs(cursor, runs, edges, jobs)
    if locked:
        cursor.execute(_KEEP, {"jobs": locked, "edges": sorted(edges)})

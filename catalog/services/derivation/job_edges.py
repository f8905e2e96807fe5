"""Job edges: dataset → job (input) and job → dataset (output), for every job that read or
wrote a dataset (ADR 0027).

Like ``edges.py``, a run's job-edge rows are a pure function of its facts (RunDataset
through the aliases' current datasets, and the run's job), rebuilt for the touched runs;
an edge's aggregate is a pure function of its runs. Edges that only gained runs fold them
in (cost independent of the edge's history); an edge that lost a run (datasets merged or
split) is recomputed from all of its runs, and deleted when none is left.
"""

from datetime import datetime
from typing import Any

from django.db import connection

# One row per (run, job, dataset, direction): a run that names two aliases of one dataset
# counts once.
_RUN_IO = """
SELECT rd.run_id, r.job_id, a.dataset_id, rd.direction, MIN(rd.first_seen), MAX(rd.last_seen)
FROM catalog_run_dataset rd
JOIN catalog_dataset_alias a ON a.id = rd.alias_id
JOIN catalog_run r ON r.id = rd.run_id
WHERE rd.run_id = ANY(%s) AND a.dataset_id IS NOT NULL
GROUP BY rd.run_id, r.job_id, a.dataset_id, rd.direction
"""
_UPSERT = """
INSERT INTO catalog_job_edge (job_id, dataset_id, direction, first_seen, last_seen, run_count)
SELECT j, d, dir, f, l, 0 FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[], %s::timestamptz[]
) AS u(j, d, dir, f, l)
ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET run_count = catalog_job_edge.run_count
RETURNING id, job_id, dataset_id, direction
"""
_DELETE_RUNS = "DELETE FROM catalog_job_edge_run WHERE run_id = ANY(%s) RETURNING edge_id, run_id"
_INSERT_RUNS = """
INSERT INTO catalog_job_edge_run (edge_id, run_id, first_seen, last_seen)
SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[])
"""
# The last run: seen last, ties broken by run UUID (never by id, which follows arrival).
_AGGREGATE = """
UPDATE catalog_job_edge e SET
    first_seen = a.first_seen, last_seen = a.last_seen, run_count = a.run_count,
    last_run_id = a.last_run_id
FROM (
    SELECT er.edge_id, MIN(er.first_seen) AS first_seen, MAX(er.last_seen) AS last_seen,
           COUNT(*) AS run_count,
           (ARRAY_AGG(er.run_id ORDER BY er.last_seen DESC, r.run_uuid DESC))[1] AS last_run_id
    FROM catalog_job_edge_run er JOIN catalog_run r ON r.id = er.run_id
    WHERE er.edge_id = ANY(%s)
    GROUP BY er.edge_id
) a
WHERE e.id = a.edge_id
"""
# Fold this batch's runs into the stored aggregate; equal to _AGGREGATE when no run left.
_FOLD = """
UPDATE catalog_job_edge e SET
    first_seen = LEAST(e.first_seen, b.first_seen),
    last_seen = GREATEST(e.last_seen, b.last_seen),
    run_count = e.run_count + a.added,
    last_run_id = CASE
        WHEN cur.id IS NULL OR best.last_seen > e.last_seen
             OR (best.last_seen = e.last_seen AND best.run_uuid >= cur.run_uuid)
        THEN best.run_id ELSE e.last_run_id END
FROM unnest(%s::bigint[], %s::int[]) AS a(edge_id, added)
CROSS JOIN LATERAL (
    SELECT MIN(er.first_seen) AS first_seen, MAX(er.last_seen) AS last_seen
    FROM catalog_job_edge_run er WHERE er.edge_id = a.edge_id AND er.run_id = ANY(%s)
) b
CROSS JOIN LATERAL (
    SELECT er.run_id, er.last_seen, r.run_uuid
    FROM catalog_job_edge_run er JOIN catalog_run r ON r.id = er.run_id
    WHERE er.edge_id = a.edge_id AND er.run_id = ANY(%s)
    ORDER BY er.last_seen DESC, r.run_uuid DESC LIMIT 1
) best
LEFT JOIN catalog_job_edge cur_edge ON cur_edge.id = a.edge_id
LEFT JOIN catalog_run cur ON cur.id = cur_edge.last_run_id
WHERE e.id = a.edge_id
"""
_DELETE_EMPTY = """
DELETE FROM catalog_job_edge e WHERE e.id = ANY(%s)
AND NOT EXISTS (SELECT 1 FROM catalog_job_edge_run er WHERE er.edge_id = e.id)
"""


def _columns(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    return [[row[index] for row in rows] for index in range(width)]


def recompute_job_edges(run_ids: set[int]) -> None:
    """Rebuild the job-edge rows of ``run_ids`` from their facts, then the touched edges."""
    if not run_ids:
        return
    runs = sorted(run_ids)
    with connection.cursor() as cursor:
        cursor.execute(_RUN_IO, [runs])
        rows: list[tuple[int, int, int, str, datetime, datetime]] = cursor.fetchall()
        spans: dict[tuple[int, int, str], tuple[datetime, datetime]] = {}
        for _, job, dataset, direction, first, last in rows:
            known = spans.get((job, dataset, direction))
            spans[(job, dataset, direction)] = (
                (first, last) if known is None else (min(known[0], first), max(known[1], last))
            )
        edge_ids: dict[tuple[int, int, str], int] = {}
        if spans:
            keys = sorted(spans)
            cursor.execute(
                _UPSERT,
                [
                    [key[0] for key in keys],
                    [key[1] for key in keys],
                    [key[2] for key in keys],
                    [spans[key][0] for key in keys],
                    [spans[key][1] for key in keys],
                ],
            )
            edge_ids = {(j, d, direction): edge for edge, j, d, direction in cursor.fetchall()}
        cursor.execute(_DELETE_RUNS, [runs])
        before = {(edge, run) for edge, run in cursor.fetchall()}
        new_rows = sorted(
            (edge_ids[(job, dataset, direction)], run, first, last)
            for run, job, dataset, direction, first, last in rows
        )
        if new_rows:
            cursor.execute(_INSERT_RUNS, _columns(new_rows, 4))
        after = {(edge, run) for edge, run, _, _ in new_rows}
        lost = sorted({edge for edge, _ in before - after})
        if lost:
            cursor.execute(_AGGREGATE, [lost])
            cursor.execute(_DELETE_EMPTY, [lost])
        added: dict[int, int] = dict.fromkeys({edge for edge, _ in after}, 0)
        for edge, _ in after - before:
            added[edge] += 1
        folded = sorted(set(added) - set(lost))
        if folded:
            cursor.execute(_FOLD, [folded, [added[edge] for edge in folded], runs, runs])

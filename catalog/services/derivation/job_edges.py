"""Job edges: dataset → job (input) and job → dataset (output), for every job that read or
wrote a dataset (ADR 0027).

Like ``edges.py``, a run's job-edge rows are a pure function of its facts (RunDataset
through the aliases' current datasets, and the run's job), rebuilt for the touched runs;
an edge's aggregate is a pure function of its runs. Edges that only gained runs fold in
the batch's own rows (cost independent of the edge's history: no statement reads another
run of the edge, ADR 0025); an edge that lost a run (datasets merged or split) is
recomputed from all of its runs, and deleted when none is left.
"""

from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection

from catalog.services.derivation.edges import columns_of, upsert_spans

# One row per (run, job, dataset, direction): a run that names two aliases of one dataset
# counts once.
_RUN_IO = """
SELECT rd.run_id, r.job_id, a.dataset_id, rd.direction, MIN(rd.first_seen), MAX(rd.last_seen),
       r.run_uuid
FROM catalog_run_dataset rd
JOIN catalog_dataset_alias a ON a.id = rd.alias_id
JOIN catalog_run r ON r.id = rd.run_id
WHERE rd.run_id = ANY(%s) AND a.dataset_id IS NOT NULL
GROUP BY rd.run_id, r.id, a.dataset_id, rd.direction
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
# Only for edges that lost a run: it reads all of the edge's runs. It returns the edges
# that still have one; the others are deleted.
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
RETURNING e.id
"""
# The common case, in time independent of the edge's history: fold this batch's runs into
# the stored aggregate. Per edge the batch brings its runs' span, the number of (edge, run)
# pairs that did not exist before and its best run by (last_seen, run_uuid), all computed
# from the batch's own rows; it reads no run of the edge (ADR 0025, amendment). Equal, by
# construction, to _AGGREGATE whenever no run left the edge, and idempotent: a redelivered
# batch adds no pair, and LEAST/GREATEST/the best run are unchanged by the same rows.
_WINS = """(e.last_run_id IS NULL OR v.last_seen > e.last_seen OR (v.last_seen = e.last_seen
    AND v.run_uuid >= (SELECT run_uuid FROM catalog_run WHERE id = e.last_run_id)))"""
_FOLD = f"""
UPDATE catalog_job_edge e SET
    first_seen = LEAST(e.first_seen, v.first_seen),
    last_seen = GREATEST(e.last_seen, v.last_seen),
    run_count = e.run_count + v.added,
    last_run_id = CASE WHEN {_WINS} THEN v.run_id ELSE e.last_run_id END
FROM unnest(
    %s::bigint[], %s::timestamptz[], %s::timestamptz[], %s::int[], %s::bigint[], %s::uuid[]
) AS v(edge_id, first_seen, last_seen, added, run_id, run_uuid)
WHERE e.id = v.edge_id
"""
# Edges _AGGREGATE found no run for, by id. No NOT EXISTS on catalog_job_edge_run: when one
# edge holds most of the table's rows the planner reads it as an anti join over the whole
# table (ADR 0025, amendment). A run another worker adds to the edge meanwhile cannot be
# lost: its row references the edge, so whichever transaction commits second fails the
# foreign-key check and the task is retried, re-deriving from the facts.
_DELETE_EMPTY = "DELETE FROM catalog_job_edge WHERE id = ANY(%s)"


def recompute_job_edges(run_ids: set[int]) -> None:
    """Rebuild the job-edge rows of ``run_ids`` from their facts, then the touched edges."""
    if not run_ids:
        return
    runs = sorted(run_ids)
    with connection.cursor() as cursor:
        cursor.execute(_RUN_IO, [runs])
        rows: list[tuple[int, int, int, str, datetime, datetime, UUID]] = cursor.fetchall()
        edge_ids = upsert_spans(
            cursor,
            _UPSERT,
            [((job, dataset, way), first, last) for _, job, dataset, way, first, last, _ in rows],
        )
        cursor.execute(_DELETE_RUNS, [runs])
        before = {(edge, run) for edge, run in cursor.fetchall()}
        new_rows = sorted(
            (edge_ids[(job, dataset, direction)], run, first, last, run_uuid)
            for run, job, dataset, direction, first, last, run_uuid in rows
        )
        if new_rows:
            cursor.execute(_INSERT_RUNS, columns_of([row[:4] for row in new_rows], 4))
        after = {(edge, run) for edge, run, *_ in new_rows}
        lost = sorted({edge for edge, _ in before - after})
        if lost:
            cursor.execute(_AGGREGATE, [lost])
            empty = sorted(set(lost) - {edge for (edge,) in cursor.fetchall()})
            if empty:
                cursor.execute(_DELETE_EMPTY, [empty])
        folds = fold_rows(new_rows, after - before, set(lost))
        if folds:
            cursor.execute(_FOLD, columns_of(folds, 6))


def fold_rows(
    rows: list[tuple[int, int, datetime, datetime, UUID]],
    new_pairs: set[tuple[int, int]],
    lost: set[int],
) -> list[tuple[int, datetime, datetime, int, int, UUID]]:
    """Per edge not in ``lost``: (id, first, last, new pairs, best run, its UUID) of this
    batch's (edge, run, first, last, run UUID) ``rows``; the best run is the one seen last,
    ties broken by UUID, as in _AGGREGATE."""
    folds: dict[int, list[Any]] = {}
    for edge, run, first, last, run_uuid in rows:
        if edge in lost:
            continue
        new = 1 if (edge, run) in new_pairs else 0
        best = (last, run_uuid, run)
        fold = folds.get(edge)
        if fold is None:
            folds[edge] = [first, last, new, best]
        else:
            fold[0], fold[1], fold[2] = min(fold[0], first), max(fold[1], last), fold[2] + new
            fold[3] = max(fold[3], best, key=lambda item: item[:2])
    return [
        (edge, first, last, added, best[2], best[1])
        for edge, (first, last, added, best) in sorted(folds.items())
    ]

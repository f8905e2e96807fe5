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
from uuid import UUID

from django.db import connection

from catalog.models.writes import newest_window_sql, write_sql
from catalog.services.derivation import retained
from catalog.services.derivation.edge_runs import EdgeRuns
from catalog.services.derivation.edges import upsert_spans

# One row per (run, job, dataset, direction): a run that names two aliases of one dataset
# counts once, and wrote it when it wrote any of them (catalog.models.writes).
_RUN_IO = """
SELECT rd.run_id, r.job_id, a.dataset_id, rd.direction, MIN(rd.first_seen), MAX(rd.last_seen),
       r.run_uuid, BOOL_OR({writes}), MIN(rd.via)
FROM catalog_run_dataset rd
JOIN catalog_dataset_alias a ON a.id = rd.alias_id
JOIN catalog_run r ON r.id = rd.run_id
WHERE rd.run_id = ANY(%(runs)s) AND a.dataset_id IS NOT NULL
  -- The runs by index too, not a hash of the whole run table (ADR 0025; seen growing
  -- with the store in bench/derive_profile.py).
  AND r.id = ANY(%(runs)s)
GROUP BY rd.run_id, r.id, a.dataset_id, rd.direction
HAVING {newest}
""".replace("{writes}", write_sql("r", "rd")).replace(
    "{newest}", newest_window_sql("r.id", "MAX(rd.last_seen)")
)
_UPSERT = """
INSERT INTO catalog_job_edge (job_id, dataset_id, direction, first_seen, last_seen, run_count)
SELECT j, d, dir, f, l, 0 FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[], %s::timestamptz[]
) AS u(j, d, dir, f, l)
ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET run_count = catalog_job_edge.run_count
RETURNING id, job_id, dataset_id, direction
"""
# An edge says how its last run named the dataset ("" listed, "column_lineage" only in an
# output's column lineage; MIN: listed under any alias wins).
JOB_EDGE_RUNS = EdgeRuns(
    "catalog_job_edge", "catalog_job_edge_run", stored=("via",), summary=retained.JOB_EDGE_SUMMARY
)


def recompute_job_edges(run_ids: set[int]) -> None:
    """Rebuild the job-edge rows of ``run_ids`` from their facts, then the touched edges."""
    if not run_ids:
        return
    runs = sorted(run_ids)
    with connection.cursor() as cursor:
        cursor.execute(_RUN_IO, {"runs": runs})
        rows: list[tuple[int, int, int, str, datetime, datetime, UUID, bool, str]] = (
            cursor.fetchall()
        )
        edge_ids = upsert_spans(
            cursor,
            _UPSERT,
            [((job, dataset, way), first, last) for _, job, dataset, way, first, last, *_ in rows],
        )
        cursor.execute(JOB_EDGE_RUNS.delete_runs, [runs])
        before = {(edge, run): done for edge, run, done in cursor.fetchall()}
        new_rows = sorted(
            (edge_ids[(job, dataset, direction)], run, first, last, run_uuid, done, via)
            for run, job, dataset, direction, first, last, run_uuid, done, via in rows
        )
        JOB_EDGE_RUNS.replace(cursor, new_rows, before)

"""edge_added names an edge's first run from a few of its runs, not all (ADR 0185).

``run_changes._ADDED`` runs on every batch whose runs touch a dataset, and for each upstream
edge of the dataset added after its first one it names the edge's first run (first seen,
then run UUID). Ordered by both columns at once over the edge's runs, PostgreSQL read every
(edge, run) row of the edge and every run's row to keep one: a job that started writing a
dataset another job wrote first paid its whole history on each batch. The plan is taken
for a batch of the edge's newest runs, its history a few thousand runs, statistics from
when it had fifty, and the rows it reads of catalog_lineage_edge_run and catalog_run
counted, but for the batch's own rows (the CTE ``target``, found from the batch's runs).
"""

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection

from catalog.services.derivation import run_changes
from tests.api.factories import T0, make_dataset, make_edge, make_job

pytestmark = pytest.mark.django_db

RUNS = 3000  # the added edge's runs, an hour apart
BATCH = 20
TIED = 3  # the edge's first runs, all first seen at its earliest time

RUNS_FILL = """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
    state_version, started_at, error_message, is_streaming, facets, facet_versions,
    job_version, updated_at, shares_run_id, tags)
  SELECT md5('run-' || i)::uuid, md5('run-' || i)::uuid::text, %(job)s, false, 'COMPLETE', '[]',
         %(t0)s + (GREATEST(i, %(tied)s) || ' hours')::interval, '', false, '{}', '{}', '[]',
         now(), false, '[]'
  FROM generate_series(%(first)s, %(last)s) AS i"""
EDGE_RUNS_FILL = """INSERT INTO catalog_lineage_edge_run (edge_id, run_id, first_seen, last_seen,
    completed)
  SELECT %(edge)s, r.id, r.started_at, r.started_at, true FROM catalog_run r
  WHERE r.run_uuid IN (SELECT md5('run-' || i)::uuid FROM generate_series(%(first)s, %(last)s) i)"""


def _rows_read(plan: dict[str, Any]) -> int:
    """Rows of the edge runs and the runs the plan's scans read (kept and removed by
    filter, times loops), but for the CTE ``target``: the batch's own edge rows."""
    if plan.get("Subplan Name") == "CTE target":
        return 0
    own = 0
    if plan.get("Relation Name") in ("catalog_lineage_edge_run", "catalog_run"):
        examined = plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)
        own = examined * plan["Actual Loops"]
    return own + sum(_rows_read(child) for child in plan.get("Plans", []))


def test_an_added_edges_first_run_is_read_from_its_first_runs() -> None:
    target, seed, source = make_dataset(), make_dataset(), make_dataset()
    writer, job = make_job("seed"), make_job("load")
    # The dataset's first upstream edge, a day before the job's first run.
    make_edge(seed, target, writer, first=T0 - timedelta(days=1))
    edge = make_edge(source, target, job, first=T0 + timedelta(hours=TIED), runs=[])
    with connection.cursor() as cursor:
        # Statistics taken when the edge had fifty runs, as on a table grown since its last
        # ANALYZE: the planner then thinks an edge has a handful.
        for first, last in ((1, 50), (51, RUNS)):
            values = {"job": job.id, "t0": T0, "tied": TIED, "first": first, "last": last}
            cursor.execute(RUNS_FILL, values)
            cursor.execute(EDGE_RUNS_FILL, {"edge": edge.id, "first": first, "last": last})
            if first == 1:
                cursor.execute("ANALYZE catalog_run, catalog_lineage_edge_run")
        cursor.execute(
            "SELECT id FROM catalog_run WHERE job_id = %s ORDER BY started_at DESC LIMIT %s",
            [job.id, BATCH],
        )
        runs = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT min(run_uuid::text) FROM catalog_run WHERE job_id = %s AND started_at = %s",
            [job.id, T0 + timedelta(hours=TIED)],
        )
        (first_run,) = cursor.fetchone()
        cursor.execute(run_changes._ADDED, {"runs": runs})
        added = cursor.fetchall()
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + run_changes._ADDED, {"runs": runs})
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    # The answer: the job's edge, added after the seed's, first run by the earliest of the
    # runs tied at its first sighting (by UUID).
    assert [row[:5] for row in added] == [
        (target.id, source.id, job.id, T0 + timedelta(hours=TIED), first_run)
    ]
    # The edge's earliest entry, its tied runs and their rows: never its thousands.
    assert _rows_read(plan) <= 4 * TIED

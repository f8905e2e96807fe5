"""The run changes' subjects read a batch's neighbours, not its job's history (ADR 0182).

``run_changes._SUBJECTS`` finds, for each run of a batch, the next finished and the next
COMPLETE run of its job. Ordered by ``started_at`` (NULLS LAST) where the job's index is
``started_at DESC NULLS LAST`` read backwards (NULLS FIRST), PostgreSQL could not walk the
index from the run and read every later run of the job (or the whole table) for each run,
twice; and the subjects, joined to catalog_run as ``IN (subquery)``, were merge-joined with
every run. On statistics older than the job's runs, bitmap scans read all of them per run.
One job re-run for years made each batch cost more than the last. The plan is taken on a
job with a few thousand runs, statistics from when it had fifty, with the settings the
statement is sent with (``run_changes._WALK``), for a batch at the start, the middle and
the end of the history (a rederive derives the old runs again), and the rows it reads of
catalog_run (each scan's rows kept and removed by its filter, times its loops) counted.
"""

from typing import Any

import pytest
from django.db import connection

from catalog.services.derivation import run_changes
from tests.api.factories import make_job

pytestmark = pytest.mark.django_db

RUNS = 3000  # one job's runs, an hour apart, one in ten failed
BATCH = 20


FILL = """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
    state_version, started_at, error_message, is_streaming, facets, facet_versions,
    job_version, updated_at, shares_run_id, tags)
  SELECT md5(j || '-' || i)::uuid, md5(j || '-' || i), j, false,
         CASE WHEN i %% 10 = 0 THEN 'FAIL' ELSE 'COMPLETE' END, '[]',
         timestamptz '2020-01-01' + (i || ' hours')::interval, '', false, '{}', '{}', '[]',
         now(), false, '[]'
  FROM unnest(%(jobs)s::bigint[]) AS j, generate_series(%(first)s, %(last)s) AS i"""


def _run_rows_read(plan: dict[str, Any]) -> int:
    own = 0
    if plan.get("Relation Name") == "catalog_run":
        examined = plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)
        own = examined * plan["Actual Loops"]
    return own + sum(_run_rows_read(child) for child in plan.get("Plans", []))


@pytest.mark.parametrize("where", ["oldest", "middle", "newest"])
def test_a_batchs_subjects_read_its_neighbours_not_the_jobs_runs(where: str) -> None:
    job = make_job("load")
    other = make_job("other")  # another job's runs, interleaved, never a neighbour
    with connection.cursor() as cursor:
        # Statistics taken when the jobs had a few runs, as on a catalog_run grown since its
        # last ANALYZE: the planner then thinks a job has a handful.
        for first, last in ((1, 50), (51, RUNS)):
            cursor.execute(FILL, {"jobs": [job.id, other.id], "first": first, "last": last})
            if first == 1:
                cursor.execute("ANALYZE catalog_run")
        start = {"oldest": 0, "middle": RUNS // 2, "newest": RUNS - BATCH}[where]
        cursor.execute(
            "SELECT id FROM catalog_run WHERE job_id = %s ORDER BY started_at, run_uuid "
            "OFFSET %s LIMIT %s",
            [job.id, start, BATCH],
        )
        runs = [row[0] for row in cursor.fetchall()]
        params = {"runs": runs, "left": [], "left_at": []}
        cursor.execute(run_changes._SUBJECTS, params)
        subjects = cursor.fetchall()
        for name in run_changes._WALK:  # the settings the statement is sent with
            cursor.execute(f"SET LOCAL {name} = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + run_changes._SUBJECTS, params)
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    # The answer: the batch's runs and the next one after it (none after the newest).
    assert len(subjects) == BATCH + (where != "newest")
    assert {row[0] for row in subjects} >= set(runs)
    # A few rows per run of the batch (itself, its next and previous runs by two states,
    # each found by walking the job's index from the run), never the job's thousands.
    assert _run_rows_read(plan) <= 15 * BATCH

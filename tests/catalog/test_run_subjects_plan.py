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
Other jobs run at the same hours. When the statistics were taken while the job had all
the runs (one job's history filling the table), the planner found the job no narrower
than a state and walked catalog_run_state_idx from each run through every job's runs of
that state (CI read 369 and 380 rows for 20 runs with one other job): the states are
tested so that no index answers them.
"""

from typing import Any

import pytest
from django.db import connection

from catalog.services.derivation import run_changes
from tests.api.factories import make_job

pytestmark = pytest.mark.django_db

RUNS = 3000  # one job's runs, an hour apart, one in ten failed
BATCH = 20
OTHERS = 5  # other jobs' runs at the same hours, never neighbours


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


@pytest.mark.parametrize("analyzed", ["all jobs", "the job alone"])
@pytest.mark.parametrize("where", ["oldest", "middle", "newest"])
def test_a_batchs_subjects_read_its_neighbours_not_the_jobs_runs(where: str, analyzed: str) -> None:
    job = make_job("load")
    others = [make_job(f"other-{n}").id for n in range(OTHERS)]
    with connection.cursor() as cursor:
        # Statistics taken when the job had fifty runs, as on a catalog_run grown since its
        # last ANALYZE: the planner then thinks a job has a handful; taken with the job's
        # runs alone, it thinks the job is every run.
        early = [job.id] if analyzed == "the job alone" else [job.id, *others]
        cursor.execute(FILL, {"jobs": early, "first": 1, "last": 50})
        cursor.execute("ANALYZE catalog_run")
        if analyzed == "the job alone":
            cursor.execute(FILL, {"jobs": others, "first": 1, "last": 50})
        cursor.execute(FILL, {"jobs": [job.id, *others], "first": 51, "last": RUNS})
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
    # each found by walking the job's index from the run), never the job's thousands nor
    # the other jobs' runs between two of its own.
    assert _run_rows_read(plan) <= 15 * BATCH

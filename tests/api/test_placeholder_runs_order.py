"""A job's latest run is its newest started run: a placeholder (a run known only from a
child's parent facet, with no start) never stands in front of one (ADR 0160).

PostgreSQL sorts NULL first in DESC, so ``ORDER BY started_at DESC`` made an Airflow DAG's
placeholder run, which its tasks named before the DAG's own run events came (or which never
came), the DAG's latest run: /jobs showed ``UNKNOWN`` and no start for a job that had just
completed, and ``/jobs?state=COMPLETE`` left it out, as did the Marquez mount's
``lastRunStates=COMPLETED`` beside the ``latestRun`` it shows (started runs only), COMPLETED.
"""

import uuid
from typing import Any

import pytest
from django.db import connection

from catalog.models import Job, Run
from tests.api.conftest import results
from tests.api.factories import at, make_job, make_run

pytestmark = pytest.mark.django_db


def _placeholder(job: Job) -> Run:
    run_uuid = uuid.uuid4()
    return Run.objects.create(
        run_uuid=run_uuid, run_id_text=str(run_uuid), job=job, is_placeholder=True
    )


@pytest.fixture
def dag() -> dict[str, Any]:
    """A DAG with real runs (the newest two started at one moment) and placeholders made
    before and after them; a second job known only from placeholders."""
    job = make_job("dag")
    first = _placeholder(job)
    make_run(job, state="FAIL", started=at(1))
    tied = [make_run(job, state="COMPLETE", started=at(2)) for _ in range(2)]
    later = [_placeholder(job) for _ in range(2)]
    unseen = make_job("unseen_dag", is_placeholder=True, first_seen=None, last_seen=None)
    only = _placeholder(unseen)
    return {"job": job, "newest": tied[-1], "placeholders": [first, *later], "unseen": only}


def test_a_jobs_latest_run_is_its_newest_started_run(api, dag) -> None:
    job, newest = dag["job"], dag["newest"]
    detail = api.get(f"/api/v1/jobs/{job.id}").json()["latest_run"]
    # Of the two runs started at the newest moment, the higher id (the list's tie-break).
    assert detail == {
        "run_id": str(newest.run_uuid),
        "state": "COMPLETE",
        "started_at": "2026-11-01T02:00:00Z",
    }
    listed = {item["name"]: item["latest_run"] for item in results(api.get("/api/v1/jobs"))}
    assert listed["dag"] == detail
    # A job with no started run still shows the run it has: its placeholder.
    assert listed["unseen_dag"] == {
        "run_id": str(dag["unseen"].run_uuid),
        "state": "UNKNOWN",
        "started_at": None,
    }


def test_the_latest_run_state_filter_reads_the_newest_started_run(api, dag) -> None:
    completed = results(api.get("/api/v1/jobs?state=COMPLETE"))
    assert [item["name"] for item in completed] == ["dag"]
    unknown = results(api.get("/api/v1/jobs?state=UNKNOWN"))
    assert [item["name"] for item in unknown] == ["unseen_dag"]


def test_the_marquez_mounts_last_run_states_agree_with_its_latest_run(api, dag) -> None:
    """The mount's ``latestRun`` reads started runs; its ``lastRunStates`` filter reads the
    catalog's latest run, which must be the same run."""
    url = "/marquez/api/v1/namespaces/airflow/jobs?lastRunStates=COMPLETED"
    jobs = api.get(url).json()["jobs"]
    assert [job["name"] for job in jobs] == ["dag"]
    assert jobs[0]["latestRun"]["id"] == str(dag["newest"].run_uuid)


def test_a_jobs_latest_run_is_read_in_its_index_order(dag) -> None:
    """The correlated subquery reads catalog_run_job_started_idx in its order, one entry a
    job: NULLS LAST in the query and not in the index would sort every run of the job."""
    jobs = Job.objects.filter(id=dag["job"].id).with_latest_run().order_by()
    sql, params = jobs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        # A job of one run costs the same read either way, and a fresh clone's run once
        # chose the job index and a sort of its one row. Sorts priced out, the index's own
        # order is taken whenever the query's order is the index's; when it is not (the bug:
        # NULLS LAST in the query only) there is no plan without a Sort and the test fails.
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "catalog_run_job_started_idx" in plan, plan
    assert "Sort" not in plan, plan

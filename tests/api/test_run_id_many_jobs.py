"""``?job_id=`` finds a job's run of a runId however many jobs sent it (ADR 0196).

``/runs/{runId}?job_id=`` (and its ``/inputs`` and ``/outputs``) picked the job among the
runs ``Run.objects.named`` returns, a text runId's first 20 by id (ADR 0183): the run of a
21st job was a 404. It is now the job's run by its key, catalog_run_uuid_job_uniq
``(run_uuid, job)``: a text runId's key is uuid5 over the job's names, so the job's row is
read, then one entry of the key's index, however many runs share the runId. The runs are
derived from events, so the key the read computes is the one derivation wrote.
"""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Job, Run
from catalog.services.derive import derive_events
from tests.api.factories import add_runs_of_job, make_job, make_run
from tests.catalog.helpers import openlineage, store
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

TEXT_RUN_ID = "scheduled__2026-01-01T00:00:00+00:00"
SHARERS = 55
# Derivation keeps a job's names without their credentials: the key is made of those.
WANTED_NAMESPACE = "postgres://loader:s3cret@db:5432"


def _event(namespace: str, name: str, run_id: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:05:00Z",
        "run": {"runId": run_id},
        "job": {"namespace": namespace, "name": name},
        "inputs": [{"namespace": "postgres://db:5432", "name": f"shop.public.{name}_in"}],
        "outputs": [],
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def _derive(events: list[dict[str, Any]]) -> None:
    derive_events(store([openlineage(event) for event in events]))


@pytest.fixture
def wanted() -> Run:
    """SHARERS jobs sent TEXT_RUN_ID; the wanted job's run is derived last (the highest id),
    and the job has 2,000 runs of other runIds."""
    make_job("batch", namespace="tests")  # a job that did not send it
    _derive([_event("tests", f"job{n:02d}", TEXT_RUN_ID) for n in range(SHARERS - 1)])
    _derive([_event(WANTED_NAMESPACE, "wanted", TEXT_RUN_ID)])
    with connection.cursor() as cursor:
        add_runs_of_job(Job.objects.get(name="wanted").id)
        cursor.execute("ANALYZE catalog_run")
        cursor.execute("ANALYZE catalog_job")
    run = Run.objects.get(job__name="wanted", run_id_text=TEXT_RUN_ID)
    assert run.id == max(Run.objects.filter(run_id_text=TEXT_RUN_ID).values_list("id", flat=True))
    assert Run.objects.filter(run_id_text=TEXT_RUN_ID).count() == SHARERS
    return run


def _get(api: Any, path: str) -> tuple[dict[str, Any], list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = api.get(path, RAW_URI=path)
    assert response.status_code == 200, response.content
    return response.json(), [query["sql"] for query in captured.captured_queries]


def _run_lookup(statements: list[str]) -> str:
    """The statement that finds the run by its key (the first that reads catalog_run)."""
    return next(sql for sql in statements if 'FROM "catalog_run"' in sql)


def test_a_text_run_id_of_many_jobs_finds_the_last_jobs_run(api, wanted) -> None:
    """The run of the 55th job that sent the runId, derived last: found (before: a 404, it
    is not among the first 20 by id), reading the job's row and one entry of the run's key,
    not the runs that share the runId."""
    path = f"/api/v1/runs/{TEXT_RUN_ID}?job_id={wanted.job_id}"
    body, statements = _get(api, path)
    assert body["run_id"] == str(wanted.run_uuid)
    assert body["job"] == {"id": wanted.job_id, "namespace": "postgres://db:5432", "name": "wanted"}
    assert len(body["same_run_id_runs"]) == 20  # the first 20 others, as before
    job = next(sql for sql in statements if 'FROM "catalog_job"' in sql.split("WHERE")[0])
    assert rows_read(job, "catalog_job") == {"catalog_job_pkey": 1}, job
    sql = _run_lookup(statements)
    assert rows_read(sql, "catalog_run") == {
        "catalog_run_uuid_job_uniq": 1,
        "catalog_run_pkey": 1,
        "catalog_run_ds_run_idx": 1,  # its link counts: its one input
    }, sql


def test_its_inputs_are_found_the_same_way(api, wanted) -> None:
    """/inputs?job_id= (the detail's inputs_url names the run's UUID; a client may send the
    text runId): the same job's run, its one input."""
    path = f"/api/v1/runs/{TEXT_RUN_ID}/inputs?job_id={wanted.job_id}"
    body, statements = _get(api, path)
    assert [item["alias"]["name"] for item in body["results"]] == ["shop.public.wanted_in"]
    sql = _run_lookup(statements)
    assert rows_read(sql, "catalog_run") == {"catalog_run_uuid_job_uniq": 1, "catalog_run_pkey": 1}


def test_each_job_finds_its_own_run_and_no_other(api, wanted) -> None:
    """Every sharer's job_id picks its own run; a job that did not send the runId, one that
    does not exist and one that is no id are the 404s they were."""
    runs = Run.objects.filter(run_id_text=TEXT_RUN_ID).order_by("id")
    for run in [runs[0], runs[19], runs[20], runs[SHARERS - 1]]:
        body, _ = _get(api, f"/api/v1/runs/{TEXT_RUN_ID}?job_id={run.job_id}")
        assert (body["run_id"], body["job"]["id"]) == (str(run.run_uuid), run.job_id)
    other = Job.objects.get(name="batch").id
    for job_id in (other, 10**12, "x"):
        response = api.get(f"/api/v1/runs/{TEXT_RUN_ID}?job_id={job_id}")
        assert response.status_code == 404, response.content
        assert response["Content-Type"] == "application/problem+json"


def test_a_uuid_run_id_of_many_jobs_is_one_entry_of_its_key(api) -> None:
    """A UUID runId 55 jobs sent (ADR 0028), the last of which has 2,000 other runs: its run
    is one entry of the key's index (a UUID is the key itself: no job row is read)."""
    shared = "5f7a1b1e-0000-4000-8000-000000000055"
    runs = [
        make_run(make_job(f"uuid{n:02d}", namespace="tests"), run_uuid=shared)
        for n in range(SHARERS)
    ]
    with connection.cursor() as cursor:
        add_runs_of_job(runs[-1].job_id)
        cursor.execute("ANALYZE catalog_run")
    body, statements = _get(api, f"/api/v1/runs/{shared}?job_id={runs[-1].job_id}")
    assert body["job"]["id"] == runs[-1].job_id
    assert not any('FROM "catalog_job"' in sql.split("WHERE")[0] for sql in statements[:1])
    sql = _run_lookup(statements)
    assert rows_read(sql, "catalog_run") == {
        "catalog_run_uuid_job_uniq": 1,
        "catalog_run_pkey": 1,
        "catalog_run_ds_run_idx": 0,
    }, sql


def test_the_detail_by_job_queries(api, wanted, django_assert_num_queries) -> None:
    """The detail's five statements (tests/api/test_catalog.py), and the job's names before
    them for a text runId with job_id."""
    with django_assert_num_queries(6):
        api.get(f"/api/v1/runs/{TEXT_RUN_ID}?job_id={wanted.job_id}")

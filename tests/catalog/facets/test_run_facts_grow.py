"""Issue 41 item 6 (ADR 0092) beyond the facet cases: data quality assertions 1-1-0 and
metrics on an output, on every surface that shows them; ``ordinal_position`` orders a
schema's fields; a job's latest test results come from its newest run that sent any."""

import pytest

from catalog.facets import data_quality_assertions, data_quality_metrics, run_tests, schema
from catalog.models import Job
from tests.api.project_fixtures import derive
from tests.catalog.facets.world import JOB, OUTPUT, RUN, Reads, event, facet, ok

pytestmark = pytest.mark.django_db

ASSERTION = {
    "assertion": "row_count",
    "success": False,
    "column": "amount",
    "severity": "warn",
    "name": "enough_rows",
    "expected": "1000",
    "actual": "999",
}


def test_assertions_1_1_0_and_metrics_on_an_output_are_shown(api, mz, admin_client):
    derive(
        event(
            output_io={
                data_quality_assertions.NAME: facet(
                    "1-1-0/DataQualityAssertionsDatasetFacet", assertions=[ASSERTION]
                ),
                data_quality_metrics.NAME: facet(
                    "1-0-3/DataQualityMetricsDatasetFacet", rowCount=999, columnMetrics={}
                ),
            }
        )
    )
    reads = Reads(api, mz)
    [entry] = [e for e in reads.run()["dataset_facts"] if e["direction"] == "output"]
    assert entry["assertions"] == [ASSERTION]
    assert entry["quality_metrics"]["row_count"] == 999
    [fact] = reads.dataset(OUTPUT)["run_facts"]
    assert fact["assertions"] == [ASSERTION] and fact["direction"] == "output"
    [version] = reads.mz_run()["outputDatasetVersions"]
    assert version["facets"][data_quality_assertions.NAME]["assertions"] == [ASSERTION]
    assert version["facets"][data_quality_metrics.NAME]["rowCount"] == 999
    run_id = Job.objects.get(name=JOB[1]).runs.get().pk
    page = admin_client.get(f"/admin/catalog/run/{run_id}/change/").content.decode()
    assert "name enough_rows; severity warn; expected 1000, actual 999" in page


def _schema(*fields: dict) -> dict:
    return {schema.NAME: facet("1-2-0/SchemaDatasetFacet", fields=list(fields))}


def test_ordinal_position_orders_the_fields_on_every_surface(api, mz, admin_client):
    derive(
        event(
            output_facets=_schema(
                {"name": "c", "type": "INT", "ordinal_position": 3},
                {"name": "unplaced", "type": "INT"},
                {
                    "name": "a",
                    "type": "STRUCT",
                    "ordinal_position": 1,
                    "fields": [
                        {"name": "y", "ordinal_position": 2},
                        {"name": "x", "ordinal_position": 1},
                    ],
                },
                {"name": "b", "type": "INT", "ordinal_position": 2},
            )
        )
    )
    reads = Reads(api, mz)
    names = [field["name"] for field in reads.dataset(OUTPUT)["fields"]]
    assert names == ["a", "a.x", "a.y", "b", "c", "unplaced"]
    assert [f["name"] for f in reads.mz_dataset()["fields"]] == names  # the dataset's rows
    assert [f["name"] for f in reads.mz_version()["fields"]] == ["a", "b", "c", "unplaced"]
    dataset_id = reads.dataset(OUTPUT)["id"]
    page = admin_client.get(f"/admin/catalog/dataset/{dataset_id}/change/").content.decode()
    assert page.index(">a.x<") < page.index(">a.y<") < page.index(">b<") < page.index(">c<")


def test_without_ordinal_positions_the_fields_keep_the_order_sent(api, mz):
    derive(event(output_facets=_schema({"name": "z"}, {"name": "m"}, {"name": "a"})))
    assert [f["name"] for f in Reads(api, mz).dataset(OUTPUT)["fields"]] == ["z", "m", "a"]


def _tests(run_id: str, when: str, status: str) -> dict:
    sent = event(
        run={run_tests.NAME: facet("1-0-1/TestRunFacet", tests=[{"name": "t", "status": status}])}
    )
    sent["run"]["runId"], sent["eventTime"] = run_id, when
    return sent


def test_the_job_shows_the_latest_runs_test_results_whatever_the_order(api, admin_client):
    newer = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7799"
    later_without = event()
    later_without["run"]["runId"] = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d77aa"
    later_without["eventTime"] = "2026-03-03T10:00:00Z"
    derive(
        _tests(newer, "2026-03-02T10:00:00Z", "fail"),
        later_without,  # a later run that sent no tests does not hide the results
        _tests(RUN, "2026-03-01T10:00:00Z", "pass"),  # an older run, arriving last
    )
    job = Job.objects.get(name=JOB[1])
    latest = ok(api.get(f"/api/v1/jobs/{job.id}"))["latest_tests"]
    assert latest["run_id"] == newer and latest["tests"][0]["status"] == "fail"
    page = admin_client.get(f"/admin/catalog/job/{job.id}/change/").content.decode()
    assert f"run {newer}" in page and ">fail<" in page

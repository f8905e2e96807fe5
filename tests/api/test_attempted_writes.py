"""Writes are completed runs (issue 31 item 1, ADR 0069) and column edges outside the
target's schema are flagged (item 3), through the API, the Marquez mount and the admin.

Fixtures (tests/fixtures/openlineage/project, SOURCES.md): an Airflow task
``report_dag.insert_report`` whose run ``…9f31`` STARTs and FAILs with its output listed
(the INSERT raised), and an earlier run ``…9f30`` of the same task that COMPLETEs, with a
schema (day, total) and column lineage into ``day`` and ``amount`` (outside the schema).
"""

from itertools import permutations
from urllib.parse import quote

import pytest

from catalog.lineage import graph
from catalog.lineage.request import NodeRef
from catalog.models import Dataset, Job, LineageEdge
from catalog.picture.build import Controls, build_picture
from catalog.picture.layout import layout
from catalog.picture.svg import render_svg
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db

FAILED = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9f31"
COMPLETED = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9f30"
PG = "postgres://warehouse:5432"
START, FAIL, COMPLETE = (
    "airflow_insert_report_start",
    "airflow_insert_report_fail",
    "airflow_insert_report_complete",
)


def _report() -> Dataset:
    return Dataset.objects.for_alias(PG, "shop.public.report").get()


def _marquez(api, path: str):
    response = api.get(f"/marquez/api/v1/namespaces/{quote(PG, safe='')}/datasets/{path}")
    assert response.status_code == 200, response.content
    return response.json()


def _output_edge(api, dataset: Dataset) -> dict:
    job = Job.objects.get(name="report_dag.insert_report")
    graph = api.get(f"/api/v1/lineage/graph?node=dataset:{dataset.id}&depth=1").json()
    [edge] = [e for e in graph["edges"] if e["id"] == f"job:{job.id}->dataset:{dataset.id}"]
    return edge


def test_a_failed_insert_is_attempted_io_and_writes_nothing(api, admin_client) -> None:
    derive(fixture(START), fixture(FAIL))
    report = _report()
    run = api.get(f"/api/v1/runs/{FAILED}").json()
    assert run["state"] == "FAIL"
    assert [o["attempted"] for o in run["outputs"]] == [True]
    assert [i["attempted"] for i in run["inputs"]] == [True]
    detail = api.get(f"/api/v1/datasets/{report.id}").json()
    assert detail["producing_jobs"] == []
    [attempt] = detail["attempting_jobs"]
    assert attempt["job"]["name"] == "report_dag.insert_report"
    assert (attempt["run_count"], attempt["completed_run_count"]) == (1, 0)
    edge = _output_edge(api, report)
    assert (edge["run_count"], edge["completed_run_count"]) == (1, 0)
    assert LineageEdge.objects.get(target=report).completed_run_count == 0
    # Marquez creates an output version only when a run completes.
    shown = _marquez(api, "shop.public.report")
    assert shown["currentVersion"] is None and shown["lastModifiedAt"] is None
    assert _marquez(api, "shop.public.report/versions")["totalCount"] == 0
    assert (
        api.get(
            f"/marquez/api/v1/namespaces/{quote(PG, safe='')}/datasets/shop.public.report"
            f"/versions/{FAILED}"
        ).status_code
        == 404
    )
    # The admin picture draws the edge red and dashed, and says why in its legend.
    drawn = build_picture(NodeRef("dataset", report.id), Controls(depth=1), lambda e: "", graph)
    assert [e.attempted for e in drawn.edges if e.target == f"dataset:{report.id}"] == [True]
    assert "lc-attempted" in str(render_svg(drawn, layout(drawn), "test"))
    page = admin_client.get(f"/admin/catalog/dataset/{report.id}/change/").content.decode()
    assert "attempted only: every run of it failed or was aborted" in page
    assert "attempted only</td>" in page  # the producing-runs table's write column


@pytest.mark.parametrize("order", list(permutations((START, FAIL, COMPLETE))))
def test_a_completed_run_of_the_same_job_is_the_only_write_in_any_order(
    api, admin_client, order
) -> None:
    """A FAIL before its START, a COMPLETE after the other run's FAIL: one answer."""
    derive(*(fixture(name) for name in order))
    report = _report()
    failed = api.get(f"/api/v1/runs/{FAILED}").json()
    completed = api.get(f"/api/v1/runs/{COMPLETED}").json()
    assert (failed["state"], completed["state"]) == ("FAIL", "COMPLETE")
    assert [o["attempted"] for o in failed["outputs"]] == [True]
    assert [o["attempted"] for o in completed["outputs"]] == [False]
    detail = api.get(f"/api/v1/datasets/{report.id}").json()
    [producer] = detail["producing_jobs"]
    assert (producer["run_count"], producer["completed_run_count"]) == (2, 1)
    job = api.get(f"/api/v1/jobs/{producer['job']['id']}").json()
    assert [(o["run_count"], o["completed_run_count"]) for o in job["outputs"]] == [(2, 1)]
    assert [(i["run_count"], i["completed_run_count"]) for i in job["inputs"]] == [(2, 1)]
    assert detail["attempting_jobs"] == []
    edge = _output_edge(api, report)
    assert (edge["run_count"], edge["completed_run_count"]) == (2, 1)
    lineage_edge = LineageEdge.objects.get(target=report)
    assert (lineage_edge.run_count, lineage_edge.completed_run_count) == (2, 1)
    # The failed run is the later one, yet the version and modification are the completed's.
    shown = _marquez(api, "shop.public.report")
    assert shown["currentVersion"] == COMPLETED
    assert shown["lastModifiedAt"] == "2026-03-02T05:00:09Z"
    versions = _marquez(api, "shop.public.report/versions")
    assert [v["version"] for v in versions["versions"]] == [COMPLETED]
    # A run's output versions are its writes: the failed run lists none (Marquez versions
    # outputs only when a run completes), the completed one lists its own.
    outputs = {
        run_id: [
            o["datasetVersionId"]["version"]
            for o in api.get(f"/marquez/api/v1/jobs/runs/{run_id}").json()["outputDatasetVersions"]
        ]
        for run_id in (FAILED, COMPLETED)
    }
    assert outputs == {FAILED: [], COMPLETED: [COMPLETED]}
    drawn = build_picture(NodeRef("dataset", report.id), Controls(depth=1), lambda e: "", graph)
    assert not any(e.attempted for e in drawn.edges)
    page = admin_client.get(f"/admin/catalog/dataset/{report.id}/change/").content.decode()
    assert "written</td>" in page and "attempted only</td>" in page


def test_a_column_edge_outside_the_schema_is_flagged_not_dropped(api) -> None:
    derive(fixture(COMPLETE))
    report = _report()
    detail = api.get(f"/api/v1/datasets/{report.id}").json()
    flags = {edge["target_field"]: edge["outside_schema"] for edge in detail["column_lineage"]}
    assert flags == {"day": False, "amount": True}
    assert detail["column_lineage_outside_schema"] == 1
    graph = api.get(f"/api/v1/lineage/graph?node=dataset:{report.id}&depth=1&columns=true").json()
    flags = {edge["target_field"]: edge["outside_schema"] for edge in graph["column_edges"]}
    assert flags == {"day": False, "amount": True}


def test_without_a_schema_no_column_edge_is_outside_it(api) -> None:
    event = fixture(COMPLETE)
    del event["outputs"][0]["facets"]["schema"]
    derive(event)
    detail = api.get(f"/api/v1/datasets/{_report().id}").json()
    assert {edge["outside_schema"] for edge in detail["column_lineage"]} == {False}
    assert detail["column_lineage_outside_schema"] == 0


@pytest.mark.parametrize("state", ["COMPLETE", "FAIL"])
def test_a_terminal_event_without_datasets_recounts_the_runs_edges(api, state) -> None:
    """Producers often send the datasets with START only: the state that ends the run
    arrives alone, in a later batch, and still decides whether its edges are writes."""
    start = fixture(START)
    end = {**fixture(FAIL), "eventType": state, "inputs": [], "outputs": []}
    derive(start, end)
    edge = _output_edge(api, _report())
    assert (edge["run_count"], edge["completed_run_count"]) == (1, int(state == "COMPLETE"))
    assert LineageEdge.objects.get().completed_run_count == int(state == "COMPLETE")


def test_marquez_serves_the_edge_outside_the_schema_with_no_field_type(api) -> None:
    """Marquez's field node has no flag: the field is served, its type null (docs/marquez.md)."""
    derive(fixture(COMPLETE))
    response = api.get(
        "/marquez/api/v1/column-lineage",
        {"nodeId": f"dataset:{PG}:shop.public.report"},
    )
    assert response.status_code == 200, response.content
    types = {
        node["data"]["field"]: node["data"]["fieldType"]
        for node in response.json()["graph"]
        if node["data"]["dataset"] == "shop.public.report"
    }
    assert types == {"day": "date", "total": "numeric", "amount": None}


def test_a_running_streaming_run_writes_as_it_goes(api) -> None:
    """A streaming job writes before it ends (ADR 0069): its RUNNING run is a write."""
    event = {**fixture(START), "eventType": "RUNNING"}
    event["job"] = {
        **event["job"],
        "facets": {
            "jobType": {
                "_producer": "https://example.com/p",
                "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
                "processingType": "STREAMING",
                "integration": "FLINK",
                "jobType": "JOB",
            }
        },
    }
    derive(event)
    run = api.get(f"/api/v1/runs/{FAILED}").json()
    assert (run["state"], run["is_streaming"]) == ("RUNNING", True)
    assert [o["attempted"] for o in run["outputs"]] == [False]
    edge = _output_edge(api, _report())
    assert (edge["run_count"], edge["completed_run_count"]) == (1, 1)
    assert _marquez(api, "shop.public.report")["currentVersion"] == FAILED

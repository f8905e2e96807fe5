"""Run facts: output/input statistics, data quality metrics and assertions per run and
dataset, on the run and dataset details, the Marquez mount and the admin (issue 26 part 7,
ADR 0061). Fixtures: tests/fixtures/openlineage/project (SOURCES.md)."""

import copy

import pytest

from catalog.models import Dataset
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db

STATISTICS_RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9e01"
QUALITY_RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9e02"


def test_the_run_detail_serves_output_and_input_statistics(api):
    derive(fixture("run_output_statistics"))
    body = api.get(f"/api/v1/runs/{STATISTICS_RUN}").json()
    facts = {(entry["direction"], entry["alias"]["name"]): entry for entry in body["dataset_facts"]}
    written = facts[("output", "orders/2026-03-01")]
    assert written["statistics"] == {"row_count": 1180, "bytes": 40960, "file_count": 2}
    assert written["dataset"]["name"] == "orders/2026-03-01"
    read = facts[("input", "/warehouse/orders")]
    assert read["statistics"] == {"row_count": 1200, "bytes": 48000, "file_count": 3}
    assert read["quality_metrics"] is None and read["assertions"] == []


def test_quality_metrics_and_assertions_on_the_run_and_the_dataset(api):
    derive(fixture("run_data_quality"))
    entry = api.get(f"/api/v1/runs/{QUALITY_RUN}").json()["dataset_facts"][0]
    assert entry["quality_metrics"]["row_count"] == 1180
    assert entry["quality_metrics"]["bytes"] == 40960
    assert entry["quality_metrics"]["column_metrics"]["customer_email"]["nullCount"] == 3
    assert {(a["assertion"], a["column"], a["success"]) for a in entry["assertions"]} == {
        ("not_null", "order_id", True),
        ("unique", "order_id", True),
        ("not_null", "customer_email", False),
        ("row_count_between", None, True),
    }
    dataset = Dataset.objects.for_alias(
        "postgres://warehouse:5432", "shop.staging.stg_orders"
    ).get()
    detail = api.get(f"/api/v1/datasets/{dataset.id}").json()
    [facts] = detail["run_facts"]
    assert facts["run_id"] == QUALITY_RUN
    assert facts["job"]["name"] == "quality.check_orders"
    assert facts["direction"] == "input"
    assert len(facts["assertions"]) == 4


def test_the_latest_event_of_the_run_decides_in_any_order(api):
    final = fixture("run_output_statistics")
    early = copy.deepcopy(final)
    early["eventType"], early["eventTime"] = "RUNNING", "2026-03-01T10:00:00Z"
    early["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] = 17
    derive(final, early)  # the earlier event arrives last
    body = api.get(f"/api/v1/runs/{STATISTICS_RUN}").json()
    output = next(e for e in body["dataset_facts"] if e["direction"] == "output")
    assert output["statistics"]["row_count"] == 1180


def test_the_dataset_detail_keeps_the_latest_ten_runs(api):
    base = fixture("run_output_statistics")
    for index in range(12):
        event = copy.deepcopy(base)
        event["run"]["runId"] = f"0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d{index:04d}"
        event["eventTime"] = f"2026-03-01T10:{index:02d}:00Z"
        event["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] = index
        derive(event)
    dataset = Dataset.objects.for_alias("s3://exports", "orders/2026-03-01").get()
    facts = api.get(f"/api/v1/datasets/{dataset.id}").json()["run_facts"]
    assert [entry["statistics"]["row_count"] for entry in facts] == list(range(11, 1, -1))


def test_run_facts_are_redacted(api, settings):
    event = fixture("run_data_quality")
    assertions = event["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
    assertions[0]["assertion"] = "password=hunter2 matches"
    derive(event)
    entry = api.get(f"/api/v1/runs/{QUALITY_RUN}").json()["dataset_facts"][0]
    assert "hunter2" not in str(entry)


def test_the_marquez_run_carries_the_datasets_io_facets(api):
    derive(fixture("run_output_statistics"))
    body = api.get(f"/marquez/api/v1/jobs/runs/{STATISTICS_RUN}").json()
    [written] = body["outputDatasetVersions"]
    assert written["datasetVersionId"]["version"] == STATISTICS_RUN
    assert written["facets"]["outputStatistics"]["rowCount"] == 1180
    [read] = body["inputDatasetVersions"]
    assert read["facets"]["inputStatistics"]["fileCount"] == 3

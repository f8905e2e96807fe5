"""Each endpoint's body carries the fields Marquez's OpenAPI document and UI name, with values
derived from the world in conftest.py (ingested through the mount, derived)."""

import itertools
from datetime import UTC, datetime
from urllib.parse import quote

import pytest

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.marquez.conftest import (
    EVENTS,
    JOB_NS,
    LOAD_RUN,
    PG,
    REPORT_RUN,
    S3,
    SECRET,
    event,
)

pytestmark = pytest.mark.django_db

NAMESPACE = {"name", "ownerName", "description", "createdAt", "updatedAt", "isHidden"}
JOB = {
    "id",
    "name",
    "namespace",
    "type",
    "description",
    "location",
    "parentJobName",
    "createdAt",
    "updatedAt",
    "tags",
    "facets",
    "latestRun",
    "latestRuns",
    "inputs",
    "outputs",
}
RUN = {
    "id",
    "state",
    "createdAt",
    "updatedAt",
    "startedAt",
    "endedAt",
    "durationMs",
    "facets",
    "jobVersion",
    "nominalStartTime",
    "nominalEndTime",
    "args",
}
DATASET = {
    "id",
    "name",
    "namespace",
    "type",
    "physicalName",
    "sourceName",
    "fields",
    "facets",
    "tags",
    "createdAt",
    "updatedAt",
    "lastModifiedAt",
    "lifecycleState",
    "deleted",
    "columnLineage",
    "description",
}
FIELD = {"name", "type", "tags", "description"}
VERSION = {"version", "createdAt", "fields", "createdByRun", "lifecycleState", "facets", "id"}
NODE = {"id", "type", "data", "inEdges", "outEdges"}
FIELD_DATA = {
    "namespace",
    "dataset",
    "field",
    "fieldType",
    "transformationDescription",
    "transformationType",
    "inputFields",
}
SEARCH_RESULT = {"type", "name", "namespace", "nodeId", "updatedAt"}


def q(text: str) -> str:
    return quote(text, safe="")


def ok(response):
    assert response.status_code == 200, response.content
    return response.json()


def test_namespaces(world, mz):
    body = ok(mz.get("/namespaces"))
    assert [n["name"] for n in body["namespaces"]] == [JOB_NS, PG, S3]
    assert all(set(n) >= NAMESPACE for n in body["namespaces"])
    one = ok(mz.get(f"/namespaces/{q(PG)}"))
    assert one["name"] == PG and one["createdAt"] == "2026-11-01T10:00:00Z"
    assert mz.get(f"/namespaces/{q('nowhere')}").status_code == 404


def test_tags_and_sources(world, mz):
    assert ok(mz.get("/tags")) == {"tags": []}
    assert ok(mz.get("/sources")) == {"sources": []}


def test_jobs_lists_and_detail(world, mz):
    for path in ("/jobs", f"/namespaces/{JOB_NS}/jobs"):
        body = ok(mz.get(path, limit="10", offset="0"))
        assert body["totalCount"] == 2
        assert all(set(job) >= JOB for job in body["jobs"])
    job = ok(mz.get(f"/namespaces/{JOB_NS}/jobs/etl.load_orders"))
    assert job["id"] == {"namespace": JOB_NS, "name": "etl.load_orders"}
    assert job["type"] == "BATCH"
    assert job["description"] == "Loads the day's orders into the lake."
    assert job["inputs"] == [{"namespace": PG, "name": "shop.public.orders"}]
    assert set(job["latestRun"]) >= RUN
    assert job["latestRun"]["id"] == LOAD_RUN
    assert [run["id"] for run in job["latestRuns"]] == [LOAD_RUN]
    assert job["facets"]["sourceCodeLocation"]["url"] == job["location"]


@pytest.mark.parametrize(
    ("states", "names"),
    [("FAILED", ["report.build"]), ("COMPLETED", ["etl.load_orders"]), ("RUNNING", [])],
)
def test_jobs_by_last_run_state(world, mz, states, names):
    body = ok(mz.get("/jobs", lastRunStates=states))
    assert [job["name"] for job in body["jobs"]] == names
    assert body["totalCount"] == len(names)


def test_runs_and_run_facets(world, mz):
    body = ok(mz.get(f"/namespaces/{JOB_NS}/jobs/report.build/runs"))
    assert body["totalCount"] == 1
    (run,) = body["runs"]
    assert set(run) >= RUN
    assert run["id"] == REPORT_RUN and run["state"] == "FAILED" and run["durationMs"] == 90_000
    assert run["jobVersion"]["name"] == "report.build"
    detail = ok(mz.get(f"/jobs/runs/{LOAD_RUN}"))
    assert detail["state"] == "COMPLETED"
    facets = ok(mz.get(f"/jobs/runs/{LOAD_RUN}/facets", type="run"))
    assert facets["runId"] == LOAD_RUN
    assert SECRET not in str(facets) and "***REDACTED***" in str(facets)
    job_facets = ok(mz.get(f"/jobs/runs/{LOAD_RUN}/facets", type="job"))
    assert "sourceCodeLocation" in job_facets["facets"]
    assert mz.get("/jobs/runs/not-a-uuid").status_code == 400
    assert mz.get("/jobs/runs/01930000-0000-7000-8000-0000000000ff").status_code == 404


def test_datasets_and_detail(world, mz):
    body = ok(mz.get(f"/namespaces/{q(PG)}/datasets"))
    assert body["totalCount"] == 2
    assert {d["name"] for d in body["datasets"]} == {
        "shop.public.orders",
        "analytics.public.daily_totals",
    }
    for dataset in body["datasets"]:
        assert set(dataset) >= DATASET
        assert all(set(field) >= FIELD for field in dataset["fields"])
    assert ok(mz.get(f"/namespaces/{q('s3a://lake/')}/datasets"))["totalCount"] == 1
    daily = ok(mz.get(f"/namespaces/{q(S3)}/datasets/{q('raw/orders/daily')}"))
    assert daily["type"] == "DB_TABLE" and daily["physicalName"] == "raw/orders/daily"
    assert daily["sourceName"] == S3 and daily["deleted"] is False
    assert daily["lastModifiedAt"] == "2026-11-01T10:05:00Z"
    assert daily["currentVersion"] == LOAD_RUN  # the run that last wrote it
    assert daily["columnLineage"][1] == {
        "name": "total",
        "inputFields": [
            {
                "namespace": PG,
                "dataset": "shop.public.orders",
                "field": "amount",
                "transformationDescription": "copied",
                "transformationType": "DIRECT",
            }
        ],
    }


def test_dataset_versions_are_the_completed_runs_that_wrote_it(world, mz):
    base = f"/namespaces/{q(S3)}/datasets/{q('raw/orders/daily')}/versions"
    body = ok(mz.get(base))
    assert body["totalCount"] == 1
    (version,) = body["versions"]
    assert set(version) >= VERSION
    assert version["version"] == LOAD_RUN
    assert version["createdByRun"]["state"] == "COMPLETED"
    assert "columnLineage" in version["facets"]
    assert ok(mz.get(f"{base}/{LOAD_RUN}"))["version"] == LOAD_RUN
    assert mz.get(f"{base}/{REPORT_RUN}").status_code == 404  # that run did not write it
    # report.build FAILed: it wrote nothing, so daily_totals has no version (Marquez makes
    # an output version only when a run completes, ADR 0069).
    totals = f"/namespaces/{q(PG)}/datasets/analytics.public.daily_totals"
    assert ok(mz.get(f"{totals}/versions")) == {"versions": [], "totalCount": 0}
    assert mz.get(f"{totals}/versions/{REPORT_RUN}").status_code == 404
    shown = ok(mz.get(totals))
    assert shown["currentVersion"] is None and shown["lastModifiedAt"] is None


def test_lineage_graph(world, mz):
    body = ok(mz.get("/lineage", nodeId="job:airflow-prod:etl.load_orders", depth="2"))
    nodes = {node["id"]: node for node in body["graph"]}
    assert all(set(node) >= NODE for node in body["graph"])
    load = nodes["job:airflow-prod:etl.load_orders"]
    # Graph nodes carry the job as Marquez's graph does: latestRun, not the last ten runs.
    assert load["type"] == "JOB" and set(load["data"]) >= JOB - {"latestRuns"}
    assert load["data"]["latestRun"]["id"] == LOAD_RUN and "latestRuns" not in load["data"]
    assert load["inEdges"] == [
        {"origin": f"dataset:{PG}:shop.public.orders", "destination": load["id"]}
    ]
    assert load["outEdges"] == [
        {"origin": load["id"], "destination": f"dataset:{S3}:raw/orders/daily"}
    ]
    daily = nodes[f"dataset:{S3}:raw/orders/daily"]
    assert daily["type"] == "DATASET" and set(daily["data"]) >= DATASET
    assert {edge["destination"] for edge in daily["outEdges"]} == {"job:airflow-prod:report.build"}
    assert body["truncated"] is False


def test_lineage_depth_is_clamped_not_refused(world, mz):
    node = f"dataset:{S3}:raw/orders/daily"
    deep = ok(mz.get("/lineage", nodeId=node, depth="500"))
    assert len(deep["graph"]) == 5  # 3 datasets, 2 jobs
    shallow = ok(mz.get("/lineage", nodeId=node, depth="0"))
    assert len(shallow["graph"]) == 5  # depth 0 reads as 1: the daily table's two jobs
    assert mz.get("/lineage", nodeId=node, depth="two").json()["code"] == 400


def test_column_lineage_by_field_dataset_and_job(world, mz):
    field = f"datasetField:{PG}:analytics.public.daily_totals:total_sum"
    body = ok(mz.get("/column-lineage", nodeId=field, depth="20", withDownstream="False"))
    nodes = {node["id"]: node for node in body["graph"]}
    assert set(nodes) == {
        field,
        f"datasetField:{S3}:raw/orders/daily:total",
        f"datasetField:{PG}:shop.public.orders:amount",
    }
    top = nodes[field]
    assert top["type"] == "DATASET_FIELD" and set(top["data"]) >= FIELD_DATA
    assert top["data"]["fieldType"] == "BIGINT"
    assert [i["field"] for i in top["data"]["inputFields"]] == ["total"]
    assert top["inEdges"] == [
        {"origin": field, "destination": f"datasetField:{S3}:raw/orders/daily:total"}
    ]

    upstream_only = ok(mz.get("/column-lineage", nodeId=f"dataset:{S3}:raw/orders/daily"))
    both = ok(
        mz.get("/column-lineage", nodeId=f"dataset:{S3}:raw/orders/daily", withDownstream="True")
    )
    assert len(upstream_only["graph"]) == 4 and len(both["graph"]) == 5
    by_job = ok(mz.get("/column-lineage", nodeId="job:airflow-prod:report.build"))
    assert field in {node["id"] for node in by_job["graph"]}


def test_search(world, mz):
    body = ok(mz.get("/search", q="orders", sort="NAME", limit="100"))
    assert body["totalCount"] == len(body["results"]) >= 2
    assert all(set(result) >= SEARCH_RESULT for result in body["results"])
    names = [result["name"] for result in body["results"]]
    assert names == sorted(names)
    jobs = ok(mz.get("/search", q="orders", filter="JOB"))["results"]
    assert jobs and {r["type"] for r in jobs} == {"JOB"}
    assert jobs[0]["nodeId"] == "job:airflow-prod:etl.load_orders"
    assert mz.get("/search").status_code == 400
    # before/after (YYYY-MM-DD) filter on when the job or dataset was last seen: before
    # the day starts, after it started (Marquez's; tests/marquez/test_marquez_bounds.py).
    assert ok(mz.get("/search", q="orders", after="2026-11-02"))["results"] == []
    assert ok(mz.get("/search", q="orders", before="2026-11-01"))["results"] == []
    assert len(ok(mz.get("/search", q="orders", before="2026-11-02"))["results"]) == 3
    assert len(ok(mz.get("/search", q="orders", after="2026-11-01"))["results"]) == 3
    assert mz.get("/search", q="orders", after="soon").status_code == 400


def test_events_lineage(world, mz):
    body = ok(
        mz.get(
            "/events/lineage", limit="100", before="", after="", offset="0", sortDirection="desc"
        )
    )
    assert body["totalCount"] == len(EVENTS)
    times = [e["eventTime"] for e in body["events"]]
    assert times == sorted(times, reverse=True)
    assert SECRET not in str(body) and "***REDACTED***" in str(body)
    ascending = ok(mz.get("/events/lineage", sortDirection="asc", limit="2", offset="1"))
    assert [e["eventTime"] for e in ascending["events"]] == [
        "2026-11-01T10:05:00Z",
        "2026-11-01T11:00:00Z",
    ]
    window = ok(
        mz.get("/events/lineage", after="2026-11-01T10:30:00Z", before="2026-11-01T12:00:00Z")
    )
    assert window["totalCount"] == 2


def test_stats_count_recent_events_and_new_assets(ingest_client, mz):
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for event_type in ("START", "COMPLETE"):
        document = event(event_type, now, LOAD_RUN, "etl.now", [], [])
        response = ingest_client.post(
            "/marquez/api/v1/lineage", document, content_type="application/json"
        )
        assert response.status_code == 201
    derive_events(list(Event.objects.values_list("id", flat=True)))
    day = ok(mz.get("/stats/lineage-events", period="DAY", timezone="Europe/Berlin"))
    assert len(day) == 24
    assert set(day[-1]) == {"startInterval", "endInterval", "start", "complete", "fail", "abort"}
    assert (day[-1]["start"], day[-1]["complete"], day[-1]["fail"]) == (1, 1, 0)
    week = ok(mz.get("/stats/jobs", period="WEEK", timezone="UTC"))
    assert (
        len(week) == 7
        and week[-1]["count"] == 1
        and set(week[-1])
        == {
            "startInterval",
            "endInterval",
            "count",
        }
    )
    assert all(item["count"] == 0 for item in ok(mz.get("/stats/sources", period="DAY")))
    assert mz.get("/stats/jobs", period="MONTH").status_code == 400
    assert mz.get("/stats/lineage-events", timezone="Mars/Olympus").status_code == 400


def test_marquez_lineage_events_backfill_then_read(tmp_path, mz):
    """docs/marquez.md's move: Marquez's lineage_events rows, exported whole or as events,
    gzipped NDJSON, through manage.py backfill, then read through the mount."""
    import gzip
    import json

    from django.core.management import call_command

    rows = [
        json.dumps({"event_time": document["eventTime"], "event": document, "_event_type": "RUN"})
        if index % 2
        else json.dumps(document)
        for index, document in enumerate(EVENTS)
    ]
    export = tmp_path / "marquez-events.ndjson.gz"
    export.write_bytes(gzip.compress("\n".join(rows).encode()))
    call_command("backfill", str(export), state=tmp_path / "state.json")
    assert Event.objects.count() == len(EVENTS)
    derive_events(list(Event.objects.values_list("id", flat=True)))
    runs = ok(mz.get(f"/namespaces/{JOB_NS}/jobs/etl.load_orders/runs"))["runs"]
    assert [(run["id"], run["state"]) for run in runs] == [(LOAD_RUN, "COMPLETED")]


def test_column_lineage_without_a_schema_and_its_depth_bound(mz):
    """Column edges name fields no schema facet listed; a 12-hop chain asked at the client's
    depth 20 is walked to the catalog's 10 levels and says it was cut."""
    from catalog.lineage.request import MAX_DEPTH
    from tests.api.factories import make_column_edge, make_dataset, make_job

    job = make_job("chain")
    tables = [make_dataset(f"chain.t{index}", namespace="warehouse") for index in range(13)]
    for source, target in itertools.pairwise(tables):
        make_column_edge(source, "c", target, "c", job)
    body = ok(mz.get("/column-lineage", nodeId="dataset:warehouse:chain.t12", depth="20"))
    fields = {node["data"]["dataset"] for node in body["graph"]}
    assert fields == {f"chain.t{index}" for index in range(12 - MAX_DEPTH, 13)}
    assert body["truncated"] is True
    short = ok(mz.get("/column-lineage", nodeId="dataset:warehouse:chain.t2", depth="20"))
    assert len(short["graph"]) == 3 and short["truncated"] is False

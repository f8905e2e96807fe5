"""Facet defects are warnings, not refusals (ADR 0004): stored as received, recorded, told.

The fixtures in tests/fixtures/fidelity were written for this project in the shapes real
producers send (dbt's null schema descriptions, Great Expectations' null assertion column,
a jobType ``_deleted`` marker, a parent facet without ``_producer``/``_schemaURL``); see
tests/fixtures/fidelity/README.md.
"""

from pathlib import Path

import orjson
import pytest
from django.core.management import call_command
from django.test import Client

from ingest.models import Event
from tests.deploy.test_metrics import scrape, value
from tests.ingest.helpers import BATCH, LINEAGE, error_paths, post_json, run_event

pytestmark = pytest.mark.django_db

FIDELITY = Path(__file__).resolve().parents[1] / "fixtures" / "fidelity"
# fixture → (paths of the problems, facets skipped by derivation)
SHAPES = {
    "dbt_schema_nulls.json": (
        {
            "/job/facets/jobType/_deleted",
            "/outputs/0/facets/schema/fields/0/description",
            "/outputs/0/facets/schema/fields/1/type",
            "/outputs/0/facets/schema/fields/1/description",
            "/outputs/0/facets/dataSource",
            "/run/facets/parent",
        },
        set(),
    ),
    "ge_assertions_null_column.json": (
        {
            "/inputs/0/inputFacets/dataQualityAssertions/assertions/0/column",
            "/inputs/0/facets/schema/fields",
        },
        {"/inputs/0/facets/schema"},
    ),
    "jobtype_deleted.json": ({"/job/facets/jobType"}, {"/job/facets/jobType"}),
    "parent_without_producer.json": ({"/run/facets/parent"}, set()),
}


def fixture(name: str) -> bytes:
    return (FIDELITY / name).read_bytes()


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_real_producer_facet_defects_are_stored_with_warnings(ingest_client, name) -> None:
    raw = fixture(name)
    response = ingest_client.post(LINEAGE, data=raw, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    paths, skipped = SHAPES[name]
    assert {warning["path"] for warning in body["warnings"]} == paths
    assert {w["facet"] for w in body["warnings"] if w["skipped"]} == skipped
    event = Event.objects.get(id=body["id"])
    assert event.received_payload == orjson.loads(raw)
    assert event.facet_problems == body["warnings"]
    again = ingest_client.post(LINEAGE, data=raw, content_type="application/json")
    assert again.status_code == 200
    assert again.json() == {**body, "status": "duplicate"}


def test_a_clean_event_has_no_warnings(ingest_client) -> None:
    response = post_json(ingest_client, LINEAGE, run_event())
    assert "warnings" not in response.json()
    assert Event.objects.get().facet_problems is None


def test_non_core_fields_are_warnings_and_the_core_still_refuses(ingest_client) -> None:
    event = run_event(producer=None, eventType="DONE", schemaURL=7)
    event["run"]["facets"] = ["not", "an", "object"]
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    warnings = {w["path"]: w for w in response.json()["warnings"]}
    assert set(warnings) == {"/producer", "/eventType", "/schemaURL", "/run/facets"}
    assert warnings["/run/facets"]["skipped"]
    stored = Event.objects.get()
    assert (stored.event_type, stored.producer, stored.schema_url) == (None, None, None)

    no_core = run_event(eventTime="soon")
    no_core["job"]["facets"] = {"sql": {"query": 42}}
    refused = post_json(ingest_client, LINEAGE, no_core)
    assert refused.status_code == 400
    assert error_paths(refused) == {"/eventTime"}
    assert Event.objects.count() == 1


def test_array_batch_and_ndjson_report_warnings_per_event(ingest_client) -> None:
    bad_facet = run_event()
    bad_facet["job"]["facets"] = {"sql": {"_producer": "p", "_schemaURL": "s", "query": 42}}
    clean = run_event()
    array = post_json(ingest_client, LINEAGE, [clean, bad_facet])
    assert array.status_code == 201
    results = array.json()["results"]
    assert "warnings" not in results[0]
    assert [w["path"] for w in results[1]["warnings"]] == ["/job/facets/sql/query"]

    no_core = run_event(eventTime="soon")
    documents = [run_event(), bad_facet | {"eventTime": "2026-11-29T11:00:00Z"}, no_core]
    for body, media in (
        (orjson.dumps(documents), "application/json"),
        (
            b"\n".join(orjson.dumps(d | {"producer": "nd"}) for d in documents),
            "application/x-ndjson",
        ),
    ):
        answer = ingest_client.post(BATCH, data=body, content_type=media).json()
        assert answer["status"] == "partial_success"
        assert [f["index"] for f in answer["failed_events"]] == [2]
        assert len(answer["warnings"]) == 1
        entry = answer["warnings"][0]
        assert entry["index"] == 1
        assert [w["path"] for w in entry["warnings"]] == ["/job/facets/sql/query"]
        assert Event.objects.get(id=entry["id"]).facet_problems == entry["warnings"]


def test_event_detail_and_filter_show_problems_redacted(ingest_client, read_client) -> None:
    event = run_event()
    event["run"]["facets"] = {
        "environmentVariables": {
            "_producer": "p",
            "_schemaURL": "s",
            "environmentVariables": [{"name": "DB_PASSWORD", "value": 1234}],
        }
    }
    stored = post_json(ingest_client, LINEAGE, event).json()
    post_json(ingest_client, LINEAGE, run_event())
    detail = read_client.get(f"/api/v1/events/{stored['id']}").json()
    problems = detail["facet_problems"]
    assert [p["path"] for p in problems] == [
        "/run/facets/environmentVariables/environmentVariables/0/value"
    ]
    assert problems[0]["skipped"] is True
    listed = read_client.get("/api/v1/events?has_facet_problems=true").json()["results"]
    assert [item["id"] for item in listed] == [stored["id"]]
    clean = read_client.get("/api/v1/events?has_facet_problems=false").json()["results"]
    assert stored["id"] not in [item["id"] for item in clean] and clean


def test_secret_values_quoted_by_a_message_are_withheld(ingest_client, read_client) -> None:
    event = run_event()
    event["job"]["facets"] = {
        "sql": {"_producer": "p", "_schemaURL": "s", "query": {"password": "hunter2"}}
    }
    stored = post_json(ingest_client, LINEAGE, event).json()
    assert "hunter2" in stored["warnings"][0]["message"]  # the sender's own answer
    detail = read_client.get(f"/api/v1/events/{stored['id']}").json()
    assert "hunter2" not in orjson.dumps(detail["facet_problems"]).decode()


def test_metrics_count_facet_problems(ingest_client) -> None:
    before = scrape(Client())
    first = ingest_client.post(
        LINEAGE, data=fixture("jobtype_deleted.json"), content_type="application/json"
    )
    ingest_client.post(
        LINEAGE, data=fixture("jobtype_deleted.json"), content_type="application/json"
    )  # a duplicate adds nothing
    after = scrape(Client())
    name = "lineage_ingest_facet_problems_total"
    labels = {"facet": "job:jobType", "skipped": "true"}
    counted = value(after, name, **labels) - value(before, name, **labels)
    assert counted == len(first.json()["warnings"]) >= 3


def test_backfill_stores_facet_defects_and_reports_them(tmp_path, capsys) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    for name in SHAPES:
        (folder / name).write_bytes(fixture(name))
    call_command("backfill", str(folder), "--state", str(tmp_path / "state.json"))
    output = capsys.readouterr().out
    assert f"stored {len(SHAPES)}, duplicate 0, refused 0" in output
    assert f"{len(SHAPES)} stored with facet problems" in output
    assert "/job/facets/jobType: " in output
    assert Event.objects.filter(facet_problems__isnull=False).count() == len(SHAPES)

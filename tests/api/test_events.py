"""/events, /events/export, /metadata and /stats."""

import gzip
import json

import pytest

from catalog.models import EventDataset
from ingest.models import Event
from tests.api.conftest import follow_all, results
from tests.api.factories import at, iso, make_dataset, make_event, make_metadata

pytestmark = pytest.mark.django_db


@pytest.fixture
def log():
    events = [
        make_event(
            event_type="START",
            event_time=at(1),
            job_namespace="airflow",
            job_name="etl.load",
            run_id="r1",
            producer="spark",
        ),
        make_event(
            event_type="COMPLETE",
            event_time=at(2),
            job_namespace="airflow",
            job_name="etl.load",
            run_id="r1",
            producer="spark",
            derivation_status="derived",
        ),
        make_event(
            kind="dataset",
            event_type=None,
            event_time=at(3),
            producer="dbt",
            payload={"eventTime": "2026-11-01T03:00:00Z", "dataset": {"namespace": "s3://x"}},
            derivation_status="failed",
            derivation_error="bad",
        ),
        make_event(kind="edge", event_type=None, event_time=at(4), producer="edge-api"),
    ]
    return events


def test_events_newest_first_with_payload_and_status(api, log):
    rows = results(api.get("/api/v1/events"))
    assert [row["id"] for row in rows] == [event.id for event in reversed(log)]
    assert rows[-1]["payload"] == log[0].payload
    assert rows[-1]["derivation_status"] == "pending"
    assert {"id", "received_at", "derivation_status", "payload"} <= set(rows[0])


def test_events_filters(api, log):
    def ids(query):
        return [row["id"] for row in results(api.get(f"/api/v1/events?{query}"))]

    assert ids("event_type=START") == [log[0].id]
    assert ids("kind=dataset") == [log[2].id]
    assert ids("producer=spark") == [log[1].id, log[0].id]
    assert ids("job_namespace=airflow&job_name=etl.load") == [log[1].id, log[0].id]
    assert ids("run_id=r1") == [log[1].id, log[0].id]
    assert ids("derivation_status=failed") == [log[2].id]
    assert ids(f"since={iso(at(2))}&until={iso(at(4))}") == [log[2].id, log[1].id]


def test_events_by_dataset_alias(api, log):
    dataset = make_dataset("shop.orders")
    alias = dataset.aliases.get()
    EventDataset.objects.create(alias=alias, event=log[1], role="output")
    assert [r["id"] for r in results(api.get(f"/api/v1/events?dataset_id={dataset.id}"))] == [
        log[1].id
    ]
    rows = results(
        api.get("/api/v1/events?dataset_namespace=postgres://db&dataset_name=shop.orders")
    )
    assert [r["id"] for r in rows] == [log[1].id]


def test_events_cursor_pages(api):
    created = [make_event().id for _ in range(9)]
    assert [r["id"] for r in follow_all(api, "/api/v1/events?limit=2")] == created[::-1]


def test_events_list_queries(api, log, django_assert_num_queries):
    # 1 events page (payload included; no per-row query)
    with django_assert_num_queries(1):
        assert len(results(api.get("/api/v1/events"))) == 4


def test_event_detail_and_404(api, log, django_assert_num_queries):
    # 1 the event, 2 other jobs' runs with its runId (ADR 0028)
    with django_assert_num_queries(2):
        assert api.get(f"/api/v1/events/{log[0].id}").json()["run_id"] == "r1"
    assert api.get("/api/v1/events/999999").status_code == 404


def test_payload_secrets_are_redacted(api):
    event = make_event(payload={"eventType": "START", "password": "hunter2"})
    row = api.get(f"/api/v1/events/{event.id}").json()
    assert "hunter2" not in json.dumps(row)


def test_export_streams_openlineage_events_as_ndjson(api, log):
    response = api.get("/api/v1/events/export")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    lines = b"".join(response.streaming_content).splitlines()
    # edge and metadata records are not OpenLineage events: not exported
    assert [json.loads(line) for line in lines] == [log[0].payload, log[1].payload, log[2].payload]


def test_export_filters_and_chunks(api, log, monkeypatch):
    from api.views import events as module

    monkeypatch.setattr(module, "EXPORT_CHUNK", 1)
    window = api.get(f"/api/v1/events/export?since={iso(at(2))}&until={iso(at(3))}")
    assert [json.loads(x) for x in b"".join(window.streaming_content).splitlines()] == [
        log[1].payload
    ]
    by_namespace = api.get("/api/v1/events/export?namespace=s3://x")
    assert len(b"".join(by_namespace.streaming_content).splitlines()) == 1
    everything = api.get("/api/v1/events/export")
    assert len(b"".join(everything.streaming_content).splitlines()) == 3


def test_export_cut_by_bytes_keeps_keyset_order_and_every_event(api, settings):
    """Chunks cut at the byte budget, events of mixed sizes sharing eventTimes: each exported
    once, in (eventTime, id) order, secrets redacted; one event over the budget goes alone."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_PAGE_BYTES": 20_000}
    sizes = [100, 15_000, 30_000, 100, 100, 9_000, 12_000, 100, 50_000, 100] * 3
    events = [
        make_event(
            event_time=at(index % 4),
            payload={"eventType": "START", "n": index, "pad": "y" * size, "password": "pw1"},
        )
        for index, size in enumerate(sizes)
    ]
    body = b"".join(api.get("/api/v1/events/export").streaming_content)
    expected = sorted(events, key=lambda event: (event.event_time, event.id))
    assert [json.loads(line)["n"] for line in body.splitlines()] == [
        event.payload["n"] for event in expected
    ]
    assert b"pw1" not in body


def test_export_keeps_integers_beyond_64_bits_exact(api):
    make_event(payload={"eventType": "START", "n": 2**70, "pi": 3.14})
    line = b"".join(api.get("/api/v1/events/export").streaming_content).strip()
    assert json.loads(line)["n"] == 2**70 and b"1180591620717411303424" in line


def test_export_is_accepted_by_backfill(api, log, tmp_path):
    """The export, fed to `manage.py backfill`, stores nothing new (same events, deduped)."""
    from django.core.management import call_command

    from ingest.models import Event

    path = tmp_path / "export.ndjson.gz"
    body = b"".join(api.get("/api/v1/events/export").streaming_content)
    path.write_bytes(gzip.compress(body))
    before = Event.objects.count()
    call_command("backfill", str(path), state=tmp_path / "state.json")
    assert Event.objects.count() >= before


def test_export_bad_time_is_400(api):
    assert api.get("/api/v1/events/export?since=soon").status_code == 400


def test_metadata_search(api):
    first = make_metadata("model-1", "alice", "deploy", at(1), stage="Production", version="7")
    second = make_metadata("model-1", "bob", "train", at(2), stage="Staging")
    make_metadata("model-2", "alice", "deploy", at(3))

    def ids(query):
        return [row["id"] for row in results(api.get(f"/api/v1/metadata?{query}"))]

    assert ids("resource=model-1") == [second.id, first.id]
    assert ids("subject=alice&action=deploy&resource=model-1") == [first.id]
    assert ids("stage=Production&version=7") == [first.id]
    assert ids(f"since={iso(at(2))}&until={iso(at(3))}") == [second.id]
    row = results(api.get("/api/v1/metadata?stage=Staging"))[0]
    assert row["additionalValues"] == {"stage": "Staging"}
    assert api.get("/api/v1/metadata?since=never").status_code == 400


def test_metadata_format_chooses_the_renderer_and_filters_nothing(api):
    """``format`` is DRF's on every route: ``?format=json`` was also read as a filter on
    additionalValues and emptied the list (and every page its links led to)."""
    record = make_metadata("model-1", "alice", "deploy", at(1), stage="Production")
    make_metadata("model-2", "bob", "train", at(2), format="parquet")
    listed = results(api.get("/api/v1/metadata?format=json&stage=Production"))
    assert [row["id"] for row in listed] == [record.id]
    assert len(results(api.get("/api/v1/metadata", {"format": "json", "limit": 1}))) == 1
    assert api.get("/api/v1/metadata?format=parquet").status_code == 400  # no such renderer


def test_metadata_refuses_a_filter_on_a_redacted_value(api):
    """docs/api.md: the list shows a secret key's value redacted, so a filter on it would
    confirm a caller's guesses of the value: a 400 naming the key, matched or not."""
    make_metadata("model-1", "alice", "deploy", at(1), db_password="hunter2", stage="Production")
    for query in ("db_password=hunter2", "db_password=wrong", "stage=Production&api_token=x"):
        response = api.get(f"/api/v1/metadata?{query}")
        assert response.status_code == 400, (query, response.content)
        assert response.json()["errors"][0]["path"] in ("/db_password", "/api_token")
    row = results(api.get("/api/v1/metadata?stage=Production"))[0]
    assert row["additionalValues"]["db_password"] != "hunter2"


def test_metadata_list_queries(api, django_assert_num_queries):
    make_metadata("m", "s", "a", at(1))
    # 1 records page
    with django_assert_num_queries(1):
        api.get("/api/v1/metadata")


def test_metadata_post_still_reaches_ingest(ingest_client):
    response = ingest_client.post(
        "/api/v1/metadata",
        {"resource": "r", "subject": "s", "action": "a", "additionalValues": {"k": "v"}},
        content_type="application/json",
    )
    assert response.status_code == 201


def test_metadata_get_is_routed_to_the_read_api(api):
    assert api.get("/api/v1/metadata").status_code == 200


def test_stats(api, log):
    body = api.get("/api/v1/stats").json()
    assert body["pending_events"] == 2
    assert body["failed_events"] == 1
    assert body["ingest_rate"]["last_hour"] == 4
    assert body["derivation_lag_seconds"] >= 0
    assert body["oldest_pending_event_id"] == log[0].id
    assert set(body["estimated_rows"]) >= {"events", "datasets", "lineage_edges"}
    # Small tables are counted exactly (the planner's estimate is for big ones).
    assert body["estimated_rows"]["events"] == Event.objects.count() > 0


def test_stats_queries(api, django_assert_num_queries):
    # 1 estimates (capped counts for small tables), 2 capped counts (pending, failed, last
    # minute/hour), 3 oldest pending
    with django_assert_num_queries(3):
        api.get("/api/v1/stats")

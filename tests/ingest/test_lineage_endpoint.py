"""POST /api/v1/lineage: storing, deduplication, validation, limits, encodings."""

import gzip
import uuid

import orjson
import pytest
from django.conf import settings
from django.test import override_settings

from ingest.models import DerivationStatus, Event, EventKind
from tests.ingest.helpers import LINEAGE, error_paths, post_gzip, post_json, run_event

pytestmark = pytest.mark.django_db


def test_run_event_is_stored_with_its_indexed_columns(ingest_client) -> None:
    event = run_event(eventType="COMPLETE", eventTime="2026-11-29T10:00:00.123456789+02:00")
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "created"
    stored = Event.objects.get(id=body["id"])
    assert stored.payload == event
    assert stored.kind == EventKind.RUN
    assert stored.event_type == "COMPLETE"
    assert stored.run_id == event["run"]["runId"]
    assert (stored.job_namespace, stored.job_name) == ("tests", "job")
    assert stored.producer == "https://example.com/tests"
    assert stored.event_time.isoformat() == "2026-11-29T08:00:00.123456+00:00"
    assert stored.derivation_status == DerivationStatus.PENDING


def test_same_event_twice_is_stored_once_and_answers_200_with_first_id(ingest_client) -> None:
    event = run_event()
    first = post_json(ingest_client, LINEAGE, event)
    # Same content, different key order and whitespace: still the same event.
    reordered = orjson.dumps(dict(reversed(list(event.items()))), option=orjson.OPT_INDENT_2)
    second = ingest_client.post(LINEAGE, data=reordered, content_type="application/json")
    assert first.status_code == 201
    assert second.status_code == 200
    assert second.json() == {"id": first.json()["id"], "status": "duplicate"}
    assert Event.objects.count() == 1


def test_dataset_and_job_events_are_told_apart_by_structure(ingest_client) -> None:
    dataset_event = {
        "eventTime": "2026-11-29T10:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "s3://lake", "name": "orders"},
    }
    job_event = {
        "eventTime": "2026-11-29T10:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "ns", "name": "static"},
        "inputs": [],
        "outputs": [{"namespace": "s3://lake", "name": "orders"}],
    }
    assert post_json(ingest_client, LINEAGE, dataset_event).status_code == 201
    assert post_json(ingest_client, LINEAGE, job_event).status_code == 201
    kinds = list(Event.objects.order_by("id").values_list("kind", flat=True))
    assert kinds == [EventKind.DATASET, EventKind.JOB]


def test_array_is_tolerated_and_stored_all_or_nothing(ingest_client) -> None:
    events = [run_event(), run_event()]
    response = post_json(ingest_client, LINEAGE, events)
    assert response.status_code == 201
    assert [item["status"] for item in response.json()["results"]] == ["created", "created"]
    bad = [run_event(), run_event(eventTime="yesterday")]
    refused = post_json(ingest_client, LINEAGE, bad)
    assert refused.status_code == 400
    assert error_paths(refused) == {"/1/eventTime"}
    assert Event.objects.count() == 2


@pytest.mark.parametrize(
    ("event_time", "stored_as"),
    [
        ("2026-11-29T10:00:00Z", "2026-11-29T10:00:00+00:00"),
        ("2026-11-29T10:00:00.641499", "2026-11-29T10:00:00.641499+00:00"),  # no zone: UTC
        ("2026-11-29T10:00:00.123456789Z", "2026-11-29T10:00:00.123456+00:00"),  # nanoseconds
        ("2026-11-29 10:00:00+0530", "2026-11-29T04:30:00+00:00"),
        ("2026-11-29T10:00:00.5-01:00", "2026-11-29T11:00:00.500000+00:00"),
    ],
)
def test_timestamps_in_the_forms_producers_send_are_accepted(
    ingest_client, event_time: str, stored_as: str
) -> None:
    response = post_json(ingest_client, LINEAGE, run_event(eventTime=event_time))
    assert response.status_code == 201, response.content
    stored = Event.objects.get(id=response.json()["id"])
    assert stored.event_time.isoformat() == stored_as
    assert stored.payload["eventTime"] == event_time


def test_non_uuid_run_id_and_missing_schema_url_are_accepted(ingest_client) -> None:
    event = run_event(run={"runId": "scheduled__2026-11-29T00:00:00+00:00"})
    del event["schemaURL"]
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    assert Event.objects.get().run_id == "scheduled__2026-11-29T00:00:00+00:00"


def test_unknown_facets_are_kept_verbatim(ingest_client) -> None:
    custom = {"_producer": "me", "_schemaURL": "https://me/facet.json", "x": [1, {"y": None}]}
    event = run_event()
    event["run"]["facets"] = {"myCompany_custom": custom}
    event["job"]["facets"] = {"sql": {"_producer": "p", "_schemaURL": "s", "query": "select 1"}}
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    assert Event.objects.get().payload["run"]["facets"]["myCompany_custom"] == custom


def test_every_offending_field_is_named(ingest_client) -> None:
    event = run_event(eventTime=12, producer=None, eventType="DONE")
    event["run"] = {"runId": 5}
    event["job"] = {"namespace": "ns"}
    event["inputs"] = [{"namespace": "n"}, "x"]
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 400
    # producer and eventType are outside the core: warnings, never refusals (ADR 0004).
    assert error_paths(response) == {
        "/eventTime",
        "/run/runId",
        "/job/name",
        "/inputs/0/name",
        "/inputs/1",
    }
    assert not Event.objects.exists()


def test_standard_facet_breaking_its_schema_is_stored_with_a_warning(ingest_client) -> None:
    event = run_event()
    event["job"]["facets"] = {"sql": {"_producer": "p", "_schemaURL": "s", "query": 42}}
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    assert response.json()["warnings"] == [
        {
            "path": "/job/facets/sql/query",
            "message": '42 is not of type "string"',
            "facet": "/job/facets/sql",
            "skipped": True,
        }
    ]
    assert Event.objects.get().payload == event


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"   ", "invalid-json"),
        (b"{not json", "invalid-json"),
        (b'"a string"', "invalid-event"),
        (b"[]", "invalid-event"),
        (b'{"eventTime": 1e400}', "invalid-json"),
        (b'{"s": "\\ud800"}', "invalid-json"),
        (b'{"s": "\xff\xfe"}', "invalid-json"),
    ],
)
def test_malformed_bodies_get_a_problem_document(ingest_client, body: bytes, problem: str) -> None:
    response = ingest_client.post(LINEAGE, data=body, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == f"urn:lineage-catalog:problem:{problem}"
    assert not Event.objects.exists()


def test_gzip_body_is_accepted(ingest_client) -> None:
    response = post_gzip(ingest_client, LINEAGE, run_event())
    assert response.status_code == 201


def test_corrupt_gzip_is_a_400(ingest_client) -> None:
    response = ingest_client.post(
        LINEAGE,
        data=gzip.compress(orjson.dumps(run_event()))[:-10],
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
    )
    assert response.status_code == 400
    assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-gzip"


def test_gzip_bomb_is_refused_with_413_without_inflating_it(ingest_client) -> None:
    limit = settings.LINEAGE["MAX_DECOMPRESSED_BYTES"]
    bomb = gzip.compress(b" " * (limit + 1024 * 1024), compresslevel=9)
    assert len(bomb) < limit // 100
    response = ingest_client.post(
        LINEAGE, data=bomb, content_type="application/json", HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 413
    assert response.json()["type"] == "urn:lineage-catalog:problem:payload-too-large"


def test_oversized_body_is_refused_with_413(ingest_client) -> None:
    lineage = {**settings.LINEAGE, "MAX_REQUEST_BYTES": 2048}
    with override_settings(LINEAGE=lineage):
        event = run_event(padding="x" * 4096)
        response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 413
    assert not Event.objects.exists()


def test_deep_nesting_is_refused(ingest_client) -> None:
    depth = settings.LINEAGE["MAX_JSON_DEPTH"] + 1
    nested: object = "leaf"
    for _ in range(depth):
        nested = {"n": nested}
    event = run_event()
    event["run"]["facets"] = {"deep": nested}
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 400
    assert response.json()["type"] == "urn:lineage-catalog:problem:too-deep"


def test_wrong_content_type_is_415(ingest_client) -> None:
    response = ingest_client.post(
        LINEAGE, data=orjson.dumps(run_event()), content_type="text/plain"
    )
    assert response.status_code == 415
    assert response.json()["type"] == "urn:lineage-catalog:problem:unsupported-media-type"


def test_unknown_content_encoding_is_415(ingest_client) -> None:
    response = ingest_client.post(
        LINEAGE,
        data=orjson.dumps(run_event()),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="br",
    )
    assert response.status_code == 415


def test_nul_character_is_accepted_and_returned_unchanged(ingest_client) -> None:
    event = run_event()
    event["job"]["facets"] = {"custom": {"note": "before\u0000after"}}
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    stored = Event.objects.get()
    assert stored.received_payload == event
    assert stored.payload["job"]["facets"]["custom"]["note"] == "before\ufffdafter"
    assert post_json(ingest_client, LINEAGE, event).status_code == 200


def test_different_events_with_the_same_run_are_both_stored(ingest_client) -> None:
    run_id = str(uuid.uuid4())
    start = run_event(run={"runId": run_id})
    complete = run_event(run={"runId": run_id}, eventType="COMPLETE")
    assert post_json(ingest_client, LINEAGE, start).status_code == 201
    assert post_json(ingest_client, LINEAGE, complete).status_code == 201
    assert Event.objects.filter(run_id=run_id).count() == 2


def test_ingest_query_count_is_pinned(
    ingest_client, steady_token_cache, django_assert_num_queries
) -> None:
    post_json(ingest_client, LINEAGE, run_event())  # warms the token cache
    # 1. INSERT ... ON CONFLICT (digest) DO NOTHING RETURNING id, digest
    with django_assert_num_queries(1):
        assert post_json(ingest_client, LINEAGE, run_event()).status_code == 201
    # 1. the INSERT (nothing returned), 2. SELECT id of the stored copy by digest
    event = run_event()
    post_json(ingest_client, LINEAGE, event)
    with django_assert_num_queries(2):
        assert post_json(ingest_client, LINEAGE, event).status_code == 200


def test_first_request_with_a_token_looks_it_up_and_records_its_use(
    ingest_client, django_assert_num_queries
) -> None:
    # 1. SELECT the token by hash, 2. UPDATE last_used_at, 3. INSERT the event
    with django_assert_num_queries(3):
        assert post_json(ingest_client, LINEAGE, run_event()).status_code == 201


def test_an_exact_copy_is_kept_only_when_jsonb_cannot_hold_the_event(ingest_client) -> None:
    # Hex strings such as runIds are not numbers: no redundant copy for them.
    plain = run_event(run={"runId": "3e5d12d6-0838-4013-a6a0-7dd1306f0ebd"})
    post_json(ingest_client, LINEAGE, plain)
    assert Event.objects.get(run_id=plain["run"]["runId"]).payload_raw is None
    exponent = run_event()
    exponent["run"]["facets"] = {"x_stats": {"rows": 1e300}}
    post_json(ingest_client, LINEAGE, exponent)
    stored = Event.objects.get(run_id=exponent["run"]["runId"])
    assert stored.payload_raw is not None
    assert stored.received_payload == exponent

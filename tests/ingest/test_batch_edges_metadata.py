"""The batch endpoint's partial success, NDJSON, edges and metadata records."""

import gzip
import tracemalloc

import orjson
import pytest

from core.problems import Problem
from ingest.middleware import database_unavailable
from ingest.models import Event, EventKind
from ingest.parsing import parse_ndjson
from tests.ingest.helpers import (
    BATCH,
    EDGES,
    LINEAGE,
    METADATA,
    error_paths,
    post_gzip,
    post_json,
    run_event,
)

pytestmark = pytest.mark.django_db


def test_batch_stores_valid_events_and_reports_each_failure(ingest_client) -> None:
    good = [run_event(), run_event()]
    bad_time = run_event(eventTime="not a time")
    bad_job = run_event(job={"namespace": "n"})
    response = post_json(ingest_client, BATCH, [good[0], bad_time, good[1], bad_job, 7])
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "partial_success"
    assert body["summary"] == {
        "received": 5,
        "successful": 2,
        "failed": 3,
        "retriable": 0,
        "non_retriable": 3,
    }
    assert [failure["index"] for failure in body["failed_events"]] == [1, 3, 4]
    assert "/1/eventTime" in body["failed_events"][0]["reason"]
    assert "/3/job/name" in body["failed_events"][1]["reason"]
    assert all(failure["retriable"] is False for failure in body["failed_events"])
    assert [event.payload for event in Event.objects.order_by("id")] == good


def test_batch_all_valid_is_success_and_duplicates_count_as_successful(ingest_client) -> None:
    event = run_event()
    response = post_json(ingest_client, BATCH, [event, event, run_event()])
    assert response.json()["status"] == "success"
    assert response.json()["summary"]["successful"] == 3
    assert Event.objects.count() == 2


def test_batch_accepts_ndjson_and_gzip(ingest_client) -> None:
    events = [run_event(), run_event(), run_event()]
    ndjson = b"\n".join(orjson.dumps(event) for event in events) + b"\n\n"
    response = ingest_client.post(
        BATCH,
        data=gzip.compress(ndjson),
        content_type="application/x-ndjson",
        HTTP_CONTENT_ENCODING="gzip",
    )
    assert response.status_code == 200
    assert response.json()["summary"]["successful"] == 3
    assert post_gzip(ingest_client, BATCH, [run_event()]).json()["status"] == "success"
    assert Event.objects.count() == 4


def test_an_ndjson_event_is_named_by_its_line_as_a_line_that_does_not_parse_is(
    ingest_client,
) -> None:
    """Blank lines count: the refused event on line 3 (from 0) was reported as the batch's
    event 1, and a line that does not parse is named by its line (docs/problems.md)."""
    good, warned = run_event(), run_event(eventType="LATER")
    lines = [b"", orjson.dumps(good), b"  ", orjson.dumps(run_event(eventTime="never")), b""]
    lines.append(orjson.dumps(warned))
    response = ingest_client.post(
        BATCH, data=b"\n".join(lines), content_type="application/x-ndjson"
    )
    body = response.json()
    assert [failure["index"] for failure in body["failed_events"]] == [3]
    assert body["failed_events"][0]["reason"].startswith("/3/eventTime")
    assert [warning["index"] for warning in body["warnings"]] == [5]
    assert body["summary"] == {
        "received": 3,
        "successful": 2,
        "failed": 1,
        "retriable": 0,
        "non_retriable": 1,
    }
    unparsed = ingest_client.post(
        BATCH, data=b"\n".join([*lines[:3], b"{"]), content_type="application/x-ndjson"
    )
    assert unparsed.status_code == 400 and error_paths(unparsed) == {"/3"}


def test_ids_follow_the_order_events_were_sent_in(ingest_client) -> None:
    """The many-event INSERT stores rows in digest order (no deadlock between batches
    sharing events, ADR 0153) and draws their ids in the order sent: derivation's sweep and
    every answer follow ids."""
    events = [run_event() for _ in range(60)]
    response = post_json(ingest_client, LINEAGE, events)
    ids = [item["id"] for item in response.json()["results"]]
    assert ids == sorted(ids)
    assert [event.payload for event in Event.objects.order_by("id")] == events
    fresh = [run_event() for _ in range(60)]
    body = orjson.dumps(events[:5] + fresh)  # five repeats first
    ingest_client.post(BATCH, data=body, content_type="application/json")
    assert [event.payload for event in Event.objects.order_by("id")][60:] == fresh


def test_batch_body_must_be_an_array(ingest_client) -> None:
    response = post_json(ingest_client, BATCH, run_event())
    assert response.status_code == 400
    assert error_paths(response) == {"/"}


def test_batch_query_count_does_not_grow_with_its_size(
    ingest_client, steady_token_cache, django_assert_num_queries
) -> None:
    post_json(ingest_client, BATCH, [run_event()])  # warms the token cache
    stored = [run_event() for _ in range(5)]
    post_json(ingest_client, BATCH, stored)
    # 1. one INSERT ... SELECT FROM unnest(...) for all 500 events
    # 2. one SELECT by digest for the 5 already stored
    with django_assert_num_queries(2):
        response = post_json(ingest_client, BATCH, stored + [run_event() for _ in range(495)])
    assert response.json()["summary"]["successful"] == 500
    assert Event.objects.count() == 501


def test_edge_is_stored_as_an_edge_event(ingest_client) -> None:
    edge = {
        "source_table": "mlflow.Production.credit_risk",
        "target_table": "iceberg.gold.predictions",
        "lineage_type": "model_scoring",
        "pipeline": "dagster:score_credit:8f1c",
    }
    response = post_json(ingest_client, EDGES, edge)
    assert response.status_code == 201
    stored = Event.objects.get(id=response.json()["id"])
    assert (stored.kind, stored.payload, stored.job_name) == (
        EventKind.EDGE,
        edge,
        "dagster:score_credit:8f1c",
    )
    assert stored.event_time is not None
    again = post_json(ingest_client, EDGES, edge)
    assert again.status_code == 200


def test_an_array_of_edges_is_stored_all_or_nothing_and_answered_as_lineage(
    ingest_client,
) -> None:
    edges = [
        {"source_table": "a.b", "target_table": "c.d"},
        {"source_table": "c.d", "target_table": "e.f"},
    ]
    response = post_json(ingest_client, EDGES, edges)
    assert response.status_code == 201
    assert response.json()["status"] == "created"
    assert [item["status"] for item in response.json()["results"]] == ["created", "created"]
    again = post_json(ingest_client, EDGES, [edges[0], {"source_table": "x.y", "target_table": 1}])
    assert again.status_code == 400
    assert error_paths(again) == {"/1/target_table"}
    assert Event.objects.count() == 2
    repeated = post_json(ingest_client, EDGES, edges)
    assert repeated.status_code == 200
    assert repeated.json()["status"] == "duplicate"


@pytest.mark.parametrize("url", [LINEAGE, EDGES, METADATA])
def test_an_empty_array_is_refused_on_every_all_or_nothing_endpoint(ingest_client, url) -> None:
    """/edges answered ``[]`` 200 "duplicate" with no results: nothing was a duplicate."""
    response = ingest_client.post(url, data=b"[]", content_type="application/json")
    assert response.status_code == 400, response.content
    assert error_paths(response) == {"/"}


def test_edge_without_tables_is_refused_with_paths(ingest_client) -> None:
    response = post_json(ingest_client, EDGES, {"source_table": "", "pipeline": 3})
    assert response.status_code == 400
    assert error_paths(response) == {"/source_table", "/target_table", "/pipeline"}
    assert not Event.objects.exists()


def test_metadata_records_get_defaults_and_ids(ingest_client) -> None:
    records = [
        {"subject": "model:credit_risk", "action": "promoted", "additionalValues": {"to": "prod"}},
        {
            "resource": "run-42",
            "subject": "dataset:orders",
            "action": "validated",
            "timestamp": "2026-11-29T09:00:00Z",
        },
    ]
    response = post_json(ingest_client, METADATA, records)
    assert response.status_code == 201
    ids = response.json()["ids"]
    first, second = (Event.objects.get(id=event_id) for event_id in ids)
    assert first.kind == EventKind.METADATA
    assert len(first.payload["resource"]) == 32
    assert first.payload["additionalValues"] == {"to": "prod"}
    assert "timestamp" in first.payload
    assert second.payload["resource"] == "run-42"
    assert second.event_time.isoformat() == "2026-11-29T09:00:00+00:00"


def test_metadata_single_record_and_errors(ingest_client) -> None:
    response = post_json(ingest_client, METADATA, {"subject": "s", "action": "a"})
    assert response.status_code == 201
    assert len(response.json()["ids"]) == 1
    bad = post_json(
        ingest_client,
        METADATA,
        {"subject": "s", "timestamp": "soon", "additionalValues": {"k": 1}},
    )
    assert bad.status_code == 400
    assert error_paths(bad) == {"/action", "/timestamp", "/additionalValues/k"}


def test_a_metadata_record_is_a_repeat_only_when_it_names_its_resource_and_time(
    ingest_client,
) -> None:
    """docs/ingest.md: over HTTP a record without ``resource`` gets a random id, so sending
    it again (a retry) stores it again; one with its resource and timestamp is stored once."""
    anonymous = {"subject": "s", "action": "a"}
    first, second = (post_json(ingest_client, METADATA, anonymous) for _ in range(2))
    assert first.status_code == second.status_code == 201
    assert first.json()["ids"] != second.json()["ids"]
    named = {"resource": "r-1", "subject": "s", "action": "a", "timestamp": "2026-11-29T09:00:00Z"}
    results = [post_json(ingest_client, METADATA, named).json()["results"] for _ in range(2)]
    assert [item["status"] for (item,) in results] == ["created", "duplicate"]
    assert results[0][0]["id"] == results[1][0]["id"]
    assert Event.objects.count() == 3


def test_the_in_doubt_503_names_what_makes_a_metadata_retry_a_duplicate(ingest_client) -> None:
    """docs/problems.md, database-unavailable: the 503 of a write that may have been stored
    tells the client that the same request again is a duplicate, and for a metadata record
    when. Naming its resource is not enough (it said so): without its timestamp the record
    is stamped "now" on arrival, so the retry is another record."""
    detail = database_unavailable("POST", in_doubt=True).detail
    resource_only = {"resource": "r-2", "subject": "s", "action": "a"}
    first, again = (post_json(ingest_client, METADATA, resource_only) for _ in range(2))
    assert [first.json()["results"][0]["status"], again.json()["results"][0]["status"]] == [
        "created",
        "created",
    ]
    assert "only when it names its resource and timestamp" in detail
    both = {**resource_only, "timestamp": "2026-11-29T09:00:00Z"}
    statuses = [post_json(ingest_client, METADATA, both).json()["results"][0]["status"]]
    statuses.append(post_json(ingest_client, METADATA, both).json()["results"][0]["status"])
    assert statuses == ["created", "duplicate"]


@pytest.mark.parametrize("media", ["application/json", "application/x-ndjson"])
def test_a_batch_over_the_event_count_limit_is_refused_whole(
    ingest_client, settings, media: str
) -> None:
    """docs/problems.md: a batch over ``LINEAGE_MAX_BATCH_EVENTS`` is a 413, nothing stored."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_BATCH_EVENTS": 3}
    events = [run_event() for _ in range(4)]
    lines = [orjson.dumps(event) for event in events]
    body = b"\n".join(lines) if media != "application/json" else orjson.dumps(events)
    response = ingest_client.post(BATCH, data=body, content_type=media)
    assert response.status_code == 413, response.content
    assert not Event.objects.exists()
    body = b"\n".join(lines[:3]) if media != "application/json" else orjson.dumps(events[:3])
    response = ingest_client.post(BATCH, data=body, content_type=media)
    assert response.json()["summary"]["successful"] == 3


def test_an_event_over_the_per_event_limit_fails_alone_in_a_batch(ingest_client) -> None:
    from django.conf import settings
    from django.test import override_settings

    small, big = run_event(), run_event(padding="x" * 5000)
    with override_settings(LINEAGE={**settings.LINEAGE, "MAX_EVENT_BYTES": 4096}):
        response = post_json(ingest_client, BATCH, [small, big])
    body = response.json()
    assert body["status"] == "partial_success"
    assert body["failed_events"][0]["index"] == 1
    assert "4096" in body["failed_events"][0]["reason"]
    assert [event.payload for event in Event.objects.all()] == [small]


def test_an_array_on_the_single_endpoints_has_the_batchs_event_count_limit(
    ingest_client, settings
) -> None:
    """An array on /lineage, /edges and /metadata is a batch too (all-or-nothing): over
    ``LINEAGE_MAX_BATCH_EVENTS`` it is a 413 with nothing stored. It had no limit but the
    body's: 16 MiB of edges were 375,000 rows in one INSERT and a 12 MB answer."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_BATCH_EVENTS": 3}
    record = {"subject": "s", "action": "a", "timestamp": "2026-01-01T00:00:00Z"}
    items = {
        LINEAGE: [run_event() for _ in range(4)],
        EDGES: [{"source_table": f"a{n}", "target_table": "b"} for n in range(4)],
        METADATA: [{**record, "resource": f"r{n}"} for n in range(4)],
    }
    for url, array in items.items():
        refused = post_json(ingest_client, url, array)
        assert refused.status_code == 413, (url, refused.content)
        assert refused.json()["detail"] == "At most 3 events per batch."
        assert not Event.objects.exists()
    for url, array in items.items():
        assert post_json(ingest_client, url, array[:3]).status_code == 201
    assert Event.objects.count() == 9


def test_ndjson_past_the_event_count_is_refused_before_its_lines_are_split_or_parsed(
    ingest_client, settings
) -> None:
    """A line past ``LINEAGE_MAX_BATCH_EVENTS`` is a 413 before it is parsed (it was a 400
    for the bad line, after every line was parsed), and cutting a body into lines costs
    no object per line: 64 KB of gzipped short lines (64 MiB inflated) took 1.2 GiB."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_BATCH_EVENTS": 3}
    lines = [orjson.dumps(run_event()) for _ in range(3)]
    body = b"\n".join([*lines, b"not JSON"])
    refused = ingest_client.post(BATCH, data=body, content_type="application/x-ndjson")
    assert refused.status_code == 413, refused.content
    assert not Event.objects.exists()

    many = b"12\n\n" * 250_000  # a million lines, half of them blank
    tracemalloc.start()
    try:
        with pytest.raises(Problem) as problem:
            parse_ndjson(many, 3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problem.value.status == 413
    assert peak < 256 * 1024, peak

"""Hostile and odd input: always a clear 4xx or an exact round trip, never a 5xx."""

import gzip
import json
from typing import Any

import orjson
import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from ingest.models import Event
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, error_paths, post_json, run_event
from tests.strategies import any_event, json_values

pytestmark = pytest.mark.django_db
FUZZ = hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_stored_as_sent(ingest_client, event: dict) -> None:
    """The event is accepted and its stored payload is exactly what was sent."""
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    assert Event.objects.get().received_payload == event


def _post_raw(client: Any, body: bytes, url: str = LINEAGE, **extra: Any) -> Any:
    return client.post(url, data=body, content_type="application/json", **extra)


@FUZZ
@given(event=any_event)
def test_every_schema_valid_event_is_accepted_and_read_back_equal(ingest_client, event) -> None:
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code in (200, 201), response.content
    assert Event.objects.get(id=response.json()["id"]).received_payload == event


@FUZZ
@given(document=json_values)
def test_arbitrary_json_never_causes_a_5xx(ingest_client, document) -> None:
    for url in (LINEAGE, BATCH, EDGES, METADATA):
        response = post_json(ingest_client, url, document)
        assert response.status_code < 500, (url, response.content)


@FUZZ
@given(event=any_event, path_choice=st.integers(min_value=0), value=json_values)
def test_a_wrong_value_anywhere_is_a_4xx_or_accepted_never_a_5xx(
    ingest_client, event, path_choice: int, value
) -> None:
    """Replace one value somewhere in a valid event with an arbitrary JSON value."""
    containers: list[tuple[Any, Any]] = []
    stack: list[Any] = [event]
    while stack:
        node = stack.pop()
        keys = list(node.keys()) if isinstance(node, dict) else range(len(node))
        for key in keys:
            containers.append((node, key))
            if isinstance(node[key], dict | list):
                stack.append(node[key])
    node, key = containers[path_choice % len(containers)]
    node[key] = value
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code in (200, 201, 400), response.content
    if response.status_code == 400:
        assert response.json()["errors"]


@FUZZ
@given(body=st.binary(min_size=1, max_size=200))
def test_random_bytes_are_a_4xx(ingest_client, body: bytes) -> None:
    assert _post_raw(ingest_client, body).status_code in (400, 413)
    gzipped = _post_raw(ingest_client, body, HTTP_CONTENT_ENCODING="gzip")
    assert gzipped.status_code in (400, 413)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'{"eventTime": "2026-01-01T00:00:00Z", "eventTime": "x"}', "invalid-json"),
        (b'{"a": NaN}', "invalid-json"),
        (b'{"a": Infinity}', "invalid-json"),
        (b'{"a": -1e999}', "invalid-json"),
        (b'{"a": "\\udc00 lone low surrogate"}', "invalid-json"),
        (b'{"a": "\xc3\x28 invalid utf-8"}', "invalid-json"),
        (b'{"a": 1,}', "invalid-json"),
        (b"\xef\xbb\xbf{}", "invalid-json"),  # a UTF-8 BOM is not JSON
        (b"{}", "invalid-event"),
        (b"null", "invalid-event"),
        (b"12", "invalid-event"),
    ],
)
def test_hostile_documents_get_a_problem_and_store_nothing(
    ingest_client, body: bytes, problem: str
) -> None:
    response = _post_raw(ingest_client, body)
    assert response.status_code == 400
    assert response.json()["type"] == f"urn:lineage-catalog:problem:{problem}"
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    "event_time",
    ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "10000-01-01T00:00:00Z"],
)
def test_times_beyond_the_calendar_are_refused(ingest_client, event_time: str) -> None:
    response = post_json(ingest_client, LINEAGE, run_event(eventTime=event_time))
    assert response.status_code == 400
    assert error_paths(response) == {"/eventTime"}


def test_duplicate_keys_are_refused_naming_the_key(ingest_client) -> None:
    body = orjson.dumps(run_event())[:-1] + b', "producer": "someone else"}'
    response = _post_raw(ingest_client, body)
    assert response.status_code == 400
    assert "producer" in response.json()["detail"]


def test_wrong_types_at_every_level_are_named(ingest_client) -> None:
    event = run_event(run=[], job="job", inputs={}, outputs=[1])
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 400
    assert error_paths(response) == {"/run", "/job", "/inputs", "/outputs/0"}
    facets_wrong = run_event()
    facets_wrong["run"]["facets"] = []
    facets_wrong["inputs"][0]["facets"] = "x"
    response = post_json(ingest_client, LINEAGE, facets_wrong)
    # Outside the core: stored as received, each problem told (ADR 0004).
    assert response.status_code == 201
    warnings = response.json()["warnings"]
    assert {(w["path"], w["skipped"]) for w in warnings} == {
        ("/run/facets", True),
        ("/inputs/0/facets", True),
    }


def test_big_integers_and_exponent_floats_round_trip_exactly(ingest_client) -> None:
    event = run_event()
    event["run"]["facets"] = {
        "x_numbers": {
            "big": 2**80,
            "negative": -(2**70),
            "huge": 1.7976931348623157e308,
            "tiny": 5e-324,
            "plain": 0.1,
        },
    }
    assert_stored_as_sent(ingest_client, event)


def test_huge_strings_and_arrays_within_limits_are_accepted(ingest_client) -> None:
    event = run_event()
    event["job"]["facets"] = {"x_blob": {"text": "é" * 2_000_000}}
    event["run"]["facets"] = {"x_list": {"items": list(range(200_000))}}
    assert_stored_as_sent(ingest_client, event)


def test_nul_in_keys_and_values_round_trips(ingest_client) -> None:
    event = run_event()
    event["run"]["facets"] = {"x\u0000key": {"v": "\u0000" * 3}}
    assert_stored_as_sent(ingest_client, event)


def test_deep_nesting_just_inside_the_limit_is_accepted(ingest_client) -> None:
    event = run_event()
    depth = settings.LINEAGE["MAX_JSON_DEPTH"] - 4  # event, run, facets, facet add 4 levels
    nested: Any = 1
    for _ in range(depth - 1):
        nested = [nested]
    event["run"]["facets"] = {"x_deep": {"v": nested}}
    assert post_json(ingest_client, LINEAGE, event).status_code == 201


def test_extremely_deep_nesting_is_refused_without_recursion_errors(ingest_client) -> None:
    body = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = _post_raw(ingest_client, body)
    assert response.status_code == 400


@pytest.mark.parametrize("depth", [65, 900, 990, 1000, 1022, 1023, 1024, 1025, 2000])
def test_nesting_at_every_depth_is_a_400_problem_on_every_endpoint(ingest_client, depth) -> None:
    """orjson accepts 1024 levels; the stdlib decoder ran out of recursion before the depth
    check (990-1024 levels were a 500). Every depth, every endpoint, NDJSON too: a 400."""
    nested = b"[" * depth + b"]" * depth
    body = b'{"a":' + nested + b"}"
    for url in (LINEAGE, BATCH, EDGES, METADATA):
        response = _post_raw(ingest_client, body, url)
        assert response.status_code == 400, (url, depth, response.content[:200])
        assert response["Content-Type"] == "application/problem+json"
    for lines in (nested, body, orjson.dumps(run_event()) + b"\n" + body):
        response = ingest_client.post(BATCH, data=lines, content_type="application/x-ndjson")
        assert response.status_code == 400, (depth, response.content[:200])
        assert response["Content-Type"] == "application/problem+json"
    assert not Event.objects.exists()


def test_gzip_with_trailing_garbage_and_gzip_of_invalid_json(ingest_client) -> None:
    response = _post_raw(ingest_client, gzip.compress(b"{not json"), HTTP_CONTENT_ENCODING="gzip")
    assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-json"
    # Bytes after the gzip stream that are not another member: corrupt, not ignored (a
    # valid event followed by them was stored, 201, with the rest never looked at).
    stream = gzip.compress(orjson.dumps(run_event()))
    for tail in (b"garbage", b"\x00\x00garbage", stream[:20]):
        response = _post_raw(ingest_client, stream + tail, HTTP_CONTENT_ENCODING="gzip")
        assert response.status_code == 400, (tail, response.content)
        assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-gzip"
    assert not Event.objects.exists()


def test_every_member_of_a_gzip_body_is_read(ingest_client) -> None:
    """A gzip body may be a series of members (RFC 1952: ``cat a.gz b.gz``, BGZF blocks),
    as backfill's ``gzip.open`` reads them. Only the first was read: an NDJSON batch in two
    members was answered "success" with the second member's events never stored."""
    first, second, third = run_event(), run_event(), run_event()
    body = b"".join(
        gzip.compress(orjson.dumps(event) + b"\n") + padding
        for event, padding in ((first, b""), (second, b"\x00" * 8), (third, b""))
    )
    response = ingest_client.post(
        BATCH, data=body, content_type="application/x-ndjson", HTTP_CONTENT_ENCODING="gzip"
    )
    assert response.status_code == 200, response.content
    assert response.json()["summary"]["received"] == 3
    assert [event.payload for event in Event.objects.order_by("id")] == [first, second, third]
    # One event split across two members is one document.
    event = orjson.dumps(run_event())
    split = gzip.compress(event[:40]) + gzip.compress(event[40:])
    assert _post_raw(ingest_client, split, HTTP_CONTENT_ENCODING="gzip").status_code == 201


def test_gzip_members_count_against_the_inflated_limit_and_are_bounded(ingest_client) -> None:
    limit = settings.LINEAGE["MAX_DECOMPRESSED_BYTES"]
    half = gzip.compress(b" " * (limit // 2 + 1), compresslevel=9)
    response = _post_raw(ingest_client, half + half, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413, response.content
    # Each member costs a pass: a body of empty ones (20 bytes each) is refused at a bound.
    empty = gzip.compress(b"", mtime=0)
    response = _post_raw(ingest_client, empty * 5000, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413, response.content
    assert "gzip members" in response.json()["detail"]
    assert not Event.objects.exists()


def test_batch_of_mixed_hostile_items_stores_only_the_valid_ones(ingest_client) -> None:
    good = run_event()
    odd_type = run_event(eventType="DONE")  # outside the core: stored, with a warning
    body = json.dumps([good, {"eventTime": 1}, [], None, "x", odd_type])
    response = ingest_client.post(BATCH, data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["summary"]["successful"] == 2
    assert [w["index"] for w in response.json()["warnings"]] == [5]
    assert [event.payload for event in Event.objects.order_by("id")] == [good, odd_type]


def test_ndjson_with_one_broken_line_is_refused_whole(ingest_client) -> None:
    body = orjson.dumps(run_event()) + b"\n{broken\n"
    response = ingest_client.post(BATCH, data=body, content_type="application/x-ndjson")
    assert response.status_code == 400
    assert error_paths(response) == {"/1"}
    assert not Event.objects.exists()

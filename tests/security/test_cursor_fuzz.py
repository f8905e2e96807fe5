"""Forged cursors: every cursor-paginated list answers 200 or a 400 invalid-cursor, never
a 500 (``cursor=cD1hYmM=``, i.e. ``p=abc`` on an integer id, reached SQL and failed)."""

import base64
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import orjson
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from catalog.models import Job
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.ingest.helpers import METADATA, run_event

pytestmark = pytest.mark.django_db
FUZZ = hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def lists(ingest_client, read_client) -> list[str]:
    for _ in range(3):
        response = ingest_client.post(
            "/api/v1/lineage", data=orjson.dumps(run_event()), content_type="application/json"
        )
        assert response.status_code == 201
    record = {"subject": "m", "action": "a", "additionalValues": {"k": "v"}}
    assert ingest_client.post(METADATA, data=record, content_type="application/json").status_code
    derive_events(list(Event.objects.values_list("id", flat=True)))
    job = Job.objects.get()
    read_client.get("/api/v1/stats")  # token cached
    return [
        "/api/v1/events",
        "/api/v1/jobs",
        "/api/v1/runs",
        "/api/v1/datasets",
        f"/api/v1/jobs/{job.id}/runs",
        "/api/v1/metadata",
    ]


def _encoded(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode()


FORGED = [
    "cD1hYmM=",  # p=abc, the review's example
    _encoded("p=abc&r=1"),
    _encoded("p=%00"),
    _encoded("p=99999999999999999999999"),
    _encoded("p=-1e400"),
    _encoded("p=2026-13-45T99:00:00"),
    _encoded("p=1&o=999999999999"),
    _encoded("o=-5"),
    _encoded("p=" + "9" * 5000),
    "!!!not-base64",
    "\x00",  # NUL in the raw parameter, not the decoded position
    "",
]
positions = st.one_of(
    st.text(max_size=40),
    st.integers().map(str),
    st.datetimes().map(lambda moment: moment.isoformat()),
    st.floats(allow_nan=True).map(str),
)
cursors = st.one_of(
    st.sampled_from(FORGED),
    st.text(max_size=60),
    st.builds(
        lambda position, offset, reverse: _encoded(
            urlencode({"p": position, "o": offset, "r": reverse}, quote_via=quote)
        ),
        positions,
        st.one_of(st.integers(-10, 10**12).map(str), st.text(max_size=5)),
        st.sampled_from(["0", "1", "x", ""]),
    ),
    st.binary(max_size=40).map(lambda raw: base64.b64encode(raw).decode()),
)


def _check(read_client, url: str, cursor: str) -> None:
    response = read_client.get(url, {"cursor": cursor})
    assert response.status_code in (200, 400), (url, cursor, response.content[:300])
    if response.status_code == 400:
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-cursor"


@pytest.mark.parametrize("cursor", FORGED)
def test_a_forged_cursor_is_a_400_on_every_list(lists, read_client, cursor) -> None:
    for url in lists:
        _check(read_client, url, cursor)
    for url in lists:
        assert read_client.get(url, {"cursor": "cD1hYmM="}).status_code == 400


def test_a_moment_without_its_offset_is_a_400_and_with_it_a_page(lists, read_client) -> None:
    """The metadata list's position is a moment: every cursor served carries its offset, so
    one without (read in the server's zone, Django warned) is a forged cursor."""
    naive = _encoded("p=" + quote("2026-11-29 10:00:00"))
    _check(read_client, "/api/v1/metadata", naive)
    assert read_client.get("/api/v1/metadata", {"cursor": naive}).status_code == 400
    aware = _encoded("p=" + quote("2026-11-29 10:00:00+00:00"))
    assert read_client.get("/api/v1/metadata", {"cursor": aware}).status_code == 200


@FUZZ
@given(cursor=cursors)
def test_cursor_fuzz_never_causes_a_5xx(lists, read_client, cursor) -> None:
    for url in lists:
        _check(read_client, url, cursor)


def test_real_cursors_still_page_through_every_list(lists, read_client) -> None:
    for url in lists:
        seen: list[object] = []
        page = read_client.get(url, {"limit": 1}).json()
        seen.extend(page["results"])
        while page["next"]:
            page = read_client.get(page["next"]).json()
            seen.extend(page["results"])
        assert seen and len(seen) == len({orjson.dumps(item) for item in seen}), url


def test_a_cursor_of_a_list_ordered_by_another_column_is_a_400(lists, read_client) -> None:
    """docs/api.md: a cursor that is no position in the list's order is a 400. Cursors are
    not signed: one of a list ordered the same way (ids, ids) reads as a position there,
    and one of a list ordered by a time (with its id, ``<time>|<id>``) fails every id list,
    and the other way round."""
    record = read_client.get("/api/v1/metadata").json()["results"][0]
    time_cursor = _encoded(urlencode({"p": f"{record['timestamp']}|1"}, quote_via=quote))
    assert read_client.get("/api/v1/metadata", {"cursor": time_cursor}).status_code == 200
    served = read_client.get("/api/v1/events", {"limit": 1}).json()["next"]
    ids = parse_qs(urlsplit(served).query)["cursor"][0]
    for url in ("/api/v1/events", "/api/v1/jobs", "/api/v1/runs", "/api/v1/datasets"):
        _check(read_client, url, time_cursor)
        assert read_client.get(url, {"cursor": time_cursor}).status_code == 400, url
        assert read_client.get(url, {"cursor": ids}).status_code == 200, url
    for url in ("/api/v1/metadata", "/api/v1/changes"):
        assert read_client.get(url, {"cursor": time_cursor}).status_code == 200, url
        _check(read_client, url, ids)
        assert read_client.get(url, {"cursor": ids}).status_code == 400, url

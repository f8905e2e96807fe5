"""The mount's defaults and bounds against Marquez's own (ADR 0170): ``/search`` answers 10
hits unless asked (SearchResource's default; its lists' is 100), ``limit`` is 0 or more
on every list (``@Min(0)``: 0 an empty page, a negative one a 400), the search's days are
Marquez's (updated before the start of ``before``, after the start of ``after``, written
YYYY-MM-DD only) and a raw events page ends before ``before`` (``event_time < :before``)."""

from datetime import timedelta

import pytest

from api.marquez import paging
from catalog.models import TagDescription
from tests.api.factories import T0, make_job
from tests.marquez.conftest import JOB_NS, MarquezClient

pytestmark = pytest.mark.django_db

ERROR = {"code", "message", "details"}

# Every list the mount pages by limit/offset, with the key of its items (bench's paths as
# tests/marquez/test_access.py's OFFSET_LISTS).
LISTS = [
    ("/namespaces", "namespaces"),
    ("/jobs", "jobs"),
    (f"/namespaces/{JOB_NS}/jobs", "jobs"),
    (f"/namespaces/{JOB_NS}/jobs/etl.load_orders/runs", "runs"),
    ("/namespaces/s3%3A%2F%2Flake/datasets", "datasets"),
    ("/namespaces/s3%3A%2F%2Flake/datasets/raw%2Forders%2Fdaily/versions", "versions"),
    ("/search", "results"),
    ("/tags", "tags"),
    ("/events/lineage", "events"),
    (f"/events/{JOB_NS}", "events"),
]


def _ok(response):
    assert response.status_code == 200, response.content
    return response.json()


def test_search_answers_marquezs_default_of_ten(mz: MarquezClient):
    """Twelve hits: ten unless asked (Marquez's SearchResource), all twelve when asked.
    With the lists' default of 100 the mount answered all twelve."""
    for number in range(12):
        make_job(f"orders_{number:02}", namespace="shop")
    assert paging.SEARCH_DEFAULT_LIMIT == 10
    body = _ok(mz.get("/search", q="orders"))
    # totalCount counts every match, not the page (ADR 0175).
    assert len(body["results"]) == 10 and body["totalCount"] == 12
    assert len(_ok(mz.get("/search", q="orders", limit="12"))["results"]) == 12


def test_lists_keep_marquezs_default_of_a_hundred(mz: MarquezClient):
    for number in range(paging.DEFAULT_LIMIT + 1):
        make_job(f"job_{number:03}", namespace="many")
    body = _ok(mz.get("/namespaces/many/jobs"))
    assert len(body["jobs"]) == 100 and body["totalCount"] == 101


@pytest.mark.parametrize(("path", "key"), LISTS)
def test_limit_zero_is_an_empty_page(world, mz: MarquezClient, path: str, key: str):
    """Marquez's ``@Min(0)``: a page of nothing (its count still given where the list has
    one); the mount served one item."""
    TagDescription.objects.create(name="pii", description="")  # the world has no tag
    whole = _ok(mz.get(path, q="orders"))
    assert whole[key], path  # the world has items on every list
    body = _ok(mz.get(path, q="orders", limit="0"))
    assert body[key] == [], path
    if "totalCount" in whole:
        assert body["totalCount"] == whole["totalCount"], path


@pytest.mark.parametrize(("path", "key"), LISTS)
def test_a_negative_limit_is_400(world, mz: MarquezClient, path: str, key: str):
    """Marquez refuses it (``@Min(0)``); the mount served one item."""
    for limit in ("-1", "-100"):
        response = mz.get(path, q="orders", limit=limit)
        assert response.status_code == 400, (path, limit, response.content)
        assert set(response.json()) == ERROR and "limit" in response.json()["message"]


def _hits(mz: MarquezClient, **days: str) -> list[str]:
    return [
        hit["name"] for hit in _ok(mz.get("/search", q="orders", limit="100", **days))["results"]
    ]


def test_search_days_are_marquezs(mz: MarquezClient):
    """SearchDao: ``updated_at < :before`` and ``updated_at > :after``, each day as the
    moment it starts (UTC). A job last seen at midnight of 1 November and one at noon: the
    mount took both days whole (``before`` 1 November held both, ``after`` 1 November the
    midnight one)."""
    make_job("orders_midnight", namespace="shop", last_seen=T0)
    make_job("orders_noon", namespace="shop", last_seen=T0 + timedelta(hours=12))
    assert _hits(mz, before="2026-11-01") == []
    assert _hits(mz, before="2026-11-02") == ["orders_midnight", "orders_noon"]
    assert _hits(mz, after="2026-11-01") == ["orders_noon"]
    assert _hits(mz, after="2026-10-31") == ["orders_midnight", "orders_noon"]
    assert _hits(mz, after="2026-11-02") == []
    assert _hits(mz, after="2026-10-31", before="2026-11-02") == ["orders_midnight", "orders_noon"]


@pytest.mark.parametrize(
    "day",
    [
        "2026-11-1",
        "20261101",
        "2026-W44-7",
        "2026-11-01T00:00",
        "\u0662\u0660\u0662\u0666-\u0661\u0661-\u0660\u0661",
    ],
)
def test_search_days_are_written_yyyy_mm_dd(mz: MarquezClient, day: str):
    """Marquez's ``@Pattern(^\\d{4}-\\d{2}-\\d{2}$)``; the mount took any form Django and
    Python read as a date."""
    for name in ("before", "after"):
        response = mz.get("/search", q="orders", **{name: day})
        assert response.status_code == 400, (name, day, response.content)
        assert set(response.json()) == ERROR


def test_events_end_before_before(world, mz: MarquezClient):
    """OpenLineageDao: ``event_time < :before AND event_time >= :after``. The load's
    COMPLETE is at 10:05: a page before 10:05 leaves it out (the mount had it), one from
    10:05 holds it."""

    def times(**moments: str) -> list[str]:
        body = _ok(mz.get("/events/lineage", sortDirection="asc", **moments))
        assert body["totalCount"] == len(body["events"])
        return [event["eventTime"] for event in body["events"]]

    assert times(before="2026-11-01T10:05:00Z") == ["2026-11-01T10:00:00Z"]
    assert times(after="2026-11-01T10:05:00Z", before="2026-11-01T11:00:00Z") == [
        "2026-11-01T10:05:00Z"
    ]
    assert times(after="2026-11-01T10:05:00Z", before="2026-11-01T10:05:00Z") == []
    assert times(before="2026-11-01T10:05:00.000001Z") == [
        "2026-11-01T10:00:00Z",
        "2026-11-01T10:05:00Z",
    ]
    # Nothing is before the first moment there is: an empty page, not a date out of range.
    assert times(before="0001-01-01T00:00:00Z") == []

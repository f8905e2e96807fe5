"""Marquez's event pages are bounded in bytes without breaking its offset paging: a page
that would exceed LINEAGE_MAX_PAGE_BYTES is refused with a Marquez error naming the limit
that fits, never shortened (the UI asks offset=page*50 and would skip what was left out)."""

import orjson
import pytest
from django.conf import settings

from tests.ingest.helpers import LINEAGE, run_event

pytestmark = pytest.mark.django_db
BUDGET = 100_000


@pytest.fixture
def large_events(monkeypatch, ingest_client) -> list[str]:
    """Ten events of ~30 KB in eventTime order, the seventh of ~150 KB (over the budget)."""
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", BUDGET)
    times = []
    for minute in range(10):
        time = f"2026-11-29T10:{minute:02d}:00Z"
        padding = "p" * (150_000 if minute == 6 else 30_000)
        event = run_event(eventTime=time, padding=padding, password="pw-in-a-large-event")
        response = ingest_client.post(
            LINEAGE, data=orjson.dumps(event), content_type="application/json"
        )
        assert response.status_code == 201
        times.append(time)
    return times


def test_a_page_over_the_budget_is_refused_with_the_limit_that_fits(large_events, mz) -> None:
    # Marquez's web UI: limit=50&offset=0
    response = mz.get(
        "/events/lineage", limit="50", offset="0", before="", after="", sortDirection="asc"
    )
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"code", "message", "details"} and body["code"] == 400
    assert "ask for at most 3 (limit=3)" in body["message"]
    assert "LINEAGE_MAX_PAGE_BYTES" in body["details"]


def test_offset_paging_at_the_limit_that_fits_walks_every_event(large_events, mz) -> None:
    seen: list[str] = []
    refused: list[int] = []
    offset = 0
    while offset < 10:
        response = mz.get("/events/lineage", limit="3", offset=str(offset), sortDirection="asc")
        limit = 3
        if response.status_code == 400:  # the page holding the large event: ask for fewer
            message = response.json()["message"]
            refused.append(offset)
            limit = int(message.rsplit("limit=", 1)[1].rstrip(")."))
            response = mz.get(
                "/events/lineage", limit=str(limit), offset=str(offset), sortDirection="asc"
            )
        assert response.status_code == 200, response.content[:300]
        assert len(response.content) < BUDGET + 200_000  # the budget, or one large event
        body = response.json()
        assert body["totalCount"] == 10 and len(body["events"]) == min(limit, 10 - offset)
        assert "pw-in-a-large-event" not in response.content.decode()
        seen += [event["eventTime"] for event in body["events"]]
        offset += len(body["events"])
    assert seen == large_events and refused == [6]  # 150 KB + 30 KB: only the first fits


def test_one_event_larger_than_the_budget_is_served_alone(large_events, mz) -> None:
    body = mz.get("/events/lineage", limit="1", offset="6", sortDirection="asc").json()
    assert [event["eventTime"] for event in body["events"]] == [large_events[6]]
    assert len(body["events"][0]["padding"]) == 150_000

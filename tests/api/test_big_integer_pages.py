"""A stored event holding an integer beyond 64 bits, read back in a list.

Ingest keeps such integers exact (docs/ingest.md); the list's byte cap measured each page
with orjson, which refuses them, and the whole events page answered 500 for as long as
that event was on it (ADR 0189).
"""

import json

import pytest

from tests.ingest.helpers import LINEAGE, run_event

pytestmark = pytest.mark.django_db

BIG = 123456789012345678901234567890


def _with_big_integer(document: dict) -> bytes:
    # The stdlib writes it: orjson, like the byte cap, refuses the integer.
    return json.dumps({**document, "x-rows": BIG}).encode()


def test_the_events_page_answers_an_event_holding_an_integer_beyond_64_bits(
    ingest_client, read_client
) -> None:
    stored = ingest_client.post(
        LINEAGE, data=_with_big_integer(run_event()), content_type="application/json"
    )
    assert stored.status_code == 201
    page = read_client.get("/api/v1/events")
    assert page.status_code == 200
    (item,) = page.json()["results"]
    assert item["id"] == stored.json()["id"]
    assert str(BIG) in page.content.decode()  # exact, as it was sent


@pytest.mark.parametrize("limit", [1, 2])
def test_a_page_cut_by_its_bytes_counts_an_event_holding_a_big_integer(
    ingest_client, read_client, settings, limit
) -> None:
    for _ in range(3):
        ingest_client.post(
            LINEAGE, data=_with_big_integer(run_event()), content_type="application/json"
        )
    settings.LINEAGE = {**settings.LINEAGE, "MAX_PAGE_BYTES": 1}  # one item a page
    page = read_client.get(f"/api/v1/events?limit={limit}")
    assert page.status_code == 200
    assert len(page.json()["results"]) == 1
    assert page.json()["next"]

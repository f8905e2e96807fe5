"""Lists ordered by a time that ties (/changes, /metadata) page through every row exactly
once, forwards and backwards, however many rows share one time (api/tied_positions.py).

DRF's cursor kept the time alone and an offset within the tie, capped at 1,000: a schema
change of 1,600 columns (1,600 changes at one ``changed_at``) served its third page again
for every ``next`` after it, and 101 changes were never reached. End to end: ingested,
derived, read over HTTP."""

import base64

import pytest

from catalog.models import DatasetChange, MetadataRecord
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.api.project_fixtures import derive
from tests.api.test_changes import load
from tests.ingest.helpers import METADATA, post_json

pytestmark = pytest.mark.django_db

# More rows at one time than DRF's offset cap (1,000) and a page (500) together.
TIED = 1_600


def follow(client, url: str, link: str, pages: int) -> tuple[list[int], dict]:
    """The ids of the pages reached by following ``link`` from ``url`` (at most ``pages``
    of them: a cursor that serves one page again must fail the test, not hang it), and the
    last page."""
    page = client.get(url).json()
    ids = [item["id"] for item in page["results"]]
    for _ in range(pages):
        if not page[link]:
            return ids, page
        page = client.get(page[link]).json()
        ids.extend(item["id"] for item in page["results"])
    raise AssertionError(f"{url}: still a {link} page after {pages} pages")


def assert_each_once(
    client, url: str, expected: list[int], limit: int, pages: int | None = None
) -> None:
    pages = pages or len(expected) // limit + 1
    forwards, last = follow(client, f"{url}&limit={limit}", "next", pages)
    assert forwards == expected  # the list's order: newest first, then the highest id
    ids, _ = follow(client, last["previous"], "previous", pages)
    # A page reached backwards lists its items in the list's order, nearest the cursor last.
    back = [item["id"] for item in last["results"]]
    assert len(ids) + len(back) == len(expected)
    assert sorted([*back, *ids]) == sorted(expected)


def test_a_wide_schema_change_pages_through_every_change_once(api) -> None:
    wide = [(f"c{n}", "int") for n in range(TIED)]
    derive(load([("id", "bigint")], 0, 0), load(wide, 100, 1))
    changes = list(
        DatasetChange.objects.order_by("-changed_at", "-id").values_list("id", flat=True)
    )
    assert len(changes) == TIED + 1  # every column added, id removed: all at one moment
    assert DatasetChange.objects.values("changed_at").distinct().count() == 1
    assert_each_once(api, "/api/v1/changes?kind=column_added,column_removed", changes, 500)
    # Pages that do not divide the tie, crossing DRF's 1,000 cap (17 a way, not 229 at 7).
    assert_each_once(api, "/api/v1/changes?since=2020-01-01", changes, 97)


def test_metadata_records_of_one_timestamp_page_through_once(api, ingest_client) -> None:
    records = [
        {
            "subject": "model",
            "action": "scored",
            "timestamp": "2026-11-01T10:00:00Z",
            "additionalValues": {"n": str(n)},
        }
        for n in range(TIED)
    ]
    assert post_json(ingest_client, METADATA, records).status_code == 201
    derive_events(list(Event.objects.values_list("id", flat=True)))
    stored = list(MetadataRecord.objects.order_by("-timestamp", "-id").values_list("id", flat=True))
    assert len(stored) == TIED
    assert_each_once(api, "/api/v1/metadata?subject=model", stored, 500)


def test_a_cursor_of_the_time_alone_still_pages_and_a_forged_pair_is_refused(api) -> None:
    """Cursors served before (``p=<time>``) keep working; a pair whose parts are not a
    time and an id is a 400 invalid-cursor, as any forged cursor."""
    derive(load([("id", "bigint")], 0, 0), load([("id", "bigint"), ("x", "int")], 100, 1))
    old = base64.b64encode(b"p=2099-01-01+00%3A00%3A00%2B00%3A00").decode()
    assert len(api.get("/api/v1/changes", {"cursor": old}).json()["results"]) == 1
    for forged in ("p=2099-01-01+00%3A00%3A00%2B00%3A00%7Cx", "p=x%7C1", "p=%7C", "p=1%7C2%7C3"):
        cursor = base64.b64encode(forged.encode()).decode()
        for url in ("/api/v1/changes", "/api/v1/metadata"):
            response = api.get(url, {"cursor": cursor})
            assert response.status_code == 400, (url, forged, response.content)
            assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-cursor"


def test_a_page_cut_by_bytes_in_a_tie_goes_on_at_the_first_record_left_out(
    api, ingest_client, settings
) -> None:
    """docs/api.md: a page stops at ``LINEAGE_MAX_PAGE_BYTES`` and ``next`` starts at the
    first item left out, also inside a run of records of one timestamp."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_PAGE_BYTES": 100_000}
    records = [
        {
            "subject": "model",
            "action": "scored",
            "timestamp": "2026-11-01T10:00:00Z",
            "additionalValues": {"n": str(n), "pad": "x" * 30_000},
        }
        for n in range(12)
    ]
    assert post_json(ingest_client, METADATA, records).status_code == 201
    derive_events(list(Event.objects.values_list("id", flat=True)))
    stored = list(MetadataRecord.objects.order_by("-timestamp", "-id").values_list("id", flat=True))
    first = api.get("/api/v1/metadata?limit=500").json()
    assert 1 <= len(first["results"]) <= 4 and first["next"]
    assert_each_once(api, "/api/v1/metadata?subject=model", stored, 500, pages=len(stored))

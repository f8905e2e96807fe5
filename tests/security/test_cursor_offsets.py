"""A cursor's moment with an offset PostgreSQL refuses is a 400, not a 500 (ADR 0198).

The lists ordered by a time and their id (``/changes``, ``/metadata``, ``/events?run_id=``)
take a position ``<time>|<id>`` or ``<time>``; Python reads offsets up to ±23:59:59, while
PostgreSQL's timestamptz takes ±15:59:59 at most, and the position was sent to it as read:
``time zone displacement out of range``, a 500 on each of the three lists. A moment whose
UTC time Python cannot hold (year 10000) is no position a list serves either.
"""

import base64
from urllib.parse import quote, urlencode

import orjson
import pytest
from django.test import Client

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.ingest.helpers import LINEAGE, run_event

pytestmark = pytest.mark.django_db
RUN_ID = "dag.task.2026-12-05"


@pytest.fixture
def lists(ingest_client: Client) -> list[str]:
    event = run_event(run={"runId": RUN_ID})
    response = ingest_client.post(
        LINEAGE, data=orjson.dumps(event), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))
    return ["/api/v1/changes", "/api/v1/metadata", f"/api/v1/events?run_id={RUN_ID}"]


def _cursor(position: str) -> str:
    return base64.b64encode(urlencode({"p": position}, quote_via=quote).encode()).decode()


def _get(client: Client, url: str, position: str) -> tuple[int, str]:
    joined = "&" if "?" in url else "?"
    answer = client.get(f"{url}{joined}cursor={quote(_cursor(position))}")
    kind = answer.json().get("type", "") if answer.status_code == 400 else ""
    return answer.status_code, kind


@pytest.mark.parametrize(
    "position",
    [
        "2026-12-05T10:00:00-23:59|5",
        "2026-12-05T10:00:00+16:00|5",
        "2026-12-05T10:00:00+23:59:59.999999",  # the time alone, as DRF reads an old cursor
        "9999-12-31T23:59:59-10:00|5",  # year 10000 in UTC
        "0001-01-01T00:00:00+14:00|1",  # year 0 in UTC
    ],
)
def test_a_cursor_moment_postgresql_or_python_cannot_take_is_a_400(
    lists: list[str], read_client: Client, position: str
) -> None:
    for url in lists:
        assert _get(read_client, url, position) == (
            400,
            "urn:lineage-catalog:problem:invalid-cursor",
        ), url


def test_a_cursor_moment_with_any_offset_postgresql_takes_is_a_page(
    lists: list[str], read_client: Client
) -> None:
    for position in ("2026-12-05T10:00:00+15:59|5", "2026-12-05T10:00:00-15:59:59|5"):
        for url in lists:
            assert _get(read_client, url, position) == (200, ""), (url, position)

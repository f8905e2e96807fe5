"""A list's boolean filter takes true or false; anything else is a 400 (docs/problems.md).

django-filter read an unknown value as "no filter": ``/events?has_facet_problems=maybe``
answered every event, the clean ones included, as if filtered (ADR 0189).
"""

import orjson
import pytest
from django.core.wsgi import get_wsgi_application
from django.test import RequestFactory

from config.read_front import ReadFrontPath
from ingest.fastpath import IngestFastPath
from tests.ingest.helpers import LINEAGE, post_json, run_event
from tests.wsgi_answer import wsgi_answer

pytestmark = pytest.mark.django_db

BROKEN_FACET = {"run": {"runId": "r1", "facets": {"parent": {"run": 1}}}}


@pytest.fixture
def two_events(ingest_client) -> dict[str, int]:
    clean = post_json(ingest_client, LINEAGE, run_event())
    broken = post_json(ingest_client, LINEAGE, run_event(**BROKEN_FACET))
    assert "warnings" in broken.json()
    return {"clean": clean.json()["id"], "broken": broken.json()["id"]}


@pytest.mark.parametrize(
    ("value", "shown"),
    [("true", "broken"), ("True", "broken"), ("1", "broken"), ("false", "clean"), ("0", "clean")],
)
def test_has_facet_problems_filters_by_its_spellings_of_true_and_false(
    read_client, two_events, value, shown
) -> None:
    page = read_client.get(f"/api/v1/events?has_facet_problems={value}")
    assert [item["id"] for item in page.json()["results"]] == [two_events[shown]]


def test_an_empty_boolean_filter_is_no_filter(read_client, two_events) -> None:
    page = read_client.get("/api/v1/events?has_facet_problems=")
    assert len(page.json()["results"]) == 2


@pytest.mark.parametrize("value", ["maybe", "2", "on", "y"])
def test_an_unknown_boolean_is_refused_not_read_as_no_filter(
    read_client, two_events, value
) -> None:
    refused = read_client.get(f"/api/v1/events?has_facet_problems={value}")
    assert refused.status_code == 400
    body = refused.json()
    assert body["type"] == "urn:lineage-catalog:problem:invalid-request"
    assert [error["path"] for error in body["errors"]] == ["/has_facet_problems"]


@pytest.mark.parametrize(
    "query",
    [
        "jobs?is_placeholder=maybe",
        "datasets?is_dropped=maybe",
        "runs?is_streaming=maybe",
        "jobs?retired=maybe",
    ],
)
def test_every_lists_boolean_filter_refuses_an_unknown_value(read_client, query) -> None:
    refused = read_client.get(f"/api/v1/{query}")
    assert refused.status_code == 400
    assert refused.json()["type"] == "urn:lineage-catalog:problem:invalid-request"


# Committed rows: the front path closes the thread's connection after its answer, as a
# served request does, which a test's transaction would not survive.
@pytest.mark.django_db(transaction=True)
def test_the_reads_front_path_refuses_an_unknown_boolean_too(read_token, two_events) -> None:
    # A bearer-token read is served in front of Django (config/read_front.py, ADR 0144).
    app = ReadFrontPath(IngestFastPath(get_wsgi_application()))
    request = RequestFactory().get(
        "/api/v1/events?has_facet_problems=maybe", HTTP_AUTHORIZATION=f"Bearer {read_token}"
    )
    status, headers, content = wsgi_answer(app, request.environ)
    assert (status, headers["Content-Type"]) == (400, "application/problem+json")
    assert orjson.loads(content)["type"] == "urn:lineage-catalog:problem:invalid-request"

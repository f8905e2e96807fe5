"""ADR 0190: the promises of docs/api.md and docs/architecture.md that the audit found false,
each held end to end against PostgreSQL through the read client."""

import base64
from typing import Any
from urllib.parse import quote

import pytest

from catalog.models import Job
from catalog.names import naming
from tests.api.conftest import follow_all, results
from tests.api.factories import T0, make_dataset, make_job, make_run
from tests.api.test_fidelity import derive_in_order, fixture

pytestmark = pytest.mark.django_db

# Every boolean filter of the model lists, with a row it keeps and a row it drops for `true`.
BOOLEAN_FILTERS = [
    ("/api/v1/jobs", "is_placeholder"),
    ("/api/v1/datasets", "is_dropped"),
    ("/api/v1/runs", "is_streaming"),
    ("/api/v1/events", "has_facet_problems"),
    ("/api/v1/jobs", "retired"),
]


def _problem_path(response: Any) -> list[str]:
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    return [error["path"] for error in response.json()["errors"]]


@pytest.mark.parametrize(("url", "name"), BOOLEAN_FILTERS)
@pytest.mark.parametrize("value", ["maybe", "2", "3", "TRUEISH", "on"])
def test_a_boolean_filter_refuses_what_is_no_boolean(api, url, name, value) -> None:
    """NullBooleanSelect read each of these as "no filter" (``2`` as true, ``3`` as false):
    the whole list came back as if filtered."""
    assert _problem_path(api.get(f"{url}?{name}={value}")) == [f"/{name}"]


@pytest.mark.parametrize("spelling", ["true", "True", "TRUE", "1", "yes"])
def test_a_boolean_filter_reads_every_spelling_the_graph_reads(api, spelling) -> None:
    """``?is_dropped=1`` listed every dataset: the filter's widget knew only true/True."""
    dropped = make_dataset("shop.public.gone", is_dropped=True)
    make_dataset("shop.public.kept")
    response = api.get(f"/api/v1/datasets?is_dropped={spelling}")
    assert response.status_code == 200, response.content
    assert [item["id"] for item in response.json()["results"]] == [dropped.id]


@pytest.mark.parametrize("spelling", ["false", "0", "no", "NO"])
def test_false_spellings_filter_the_other_way(api, spelling) -> None:
    make_job("parent", is_placeholder=True)
    child = make_job("child")
    make_run(child)
    response = api.get(f"/api/v1/jobs?is_placeholder={spelling}")
    assert [item["id"] for item in response.json()["results"]] == [child.id]


@pytest.mark.parametrize(
    "run_id",
    [
        "manual__2026-10-01T09:00:00.123456+00:00",  # Airflow's own runIds hold a dot
        "etl.orders.2026-10-01",
        "nightly/orders/17",
        "..",
    ],
)
def test_a_run_is_found_by_any_run_id_text_it_was_sent(api, run_id) -> None:
    """docs/api.md: "`{runId}` is a UUID or the text a producer sent". The router's
    default pattern ([^/.]+) answered 404 for a runId with a dot or a slash, before the
    view looked it up."""
    event = fixture("jobtype_deleted.json")
    event["run"]["runId"] = run_id
    derive_in_order([event])
    response = api.get("/api/v1/runs/" + quote(run_id, safe=""))
    assert response.status_code == 200, response.content
    assert response.json()["run_id_as_sent"] == run_id
    assert api.get("/api/v1/runs/" + quote(run_id + ".x", safe="")).status_code == 404


def test_every_namespace_can_be_listed(api) -> None:
    """Invariant 7, "every list is paginated": /namespaces pages by offset, and refused
    offsets past 1,000, so with limit 500 a store's namespaces past the 1,500th could not
    be read. The list is read whole from its summary, so any offset costs the same."""
    names = [f"s3://bucket-{index:05d}" for index in range(1_600)]
    Job.objects.bulk_create(
        Job(
            namespace=name,
            name="load",
            key_hash=naming.key_hash(name, "load"),
            first_seen=T0,
            last_seen=T0,
            is_placeholder=False,
        )
        for name in names
    )
    listed: list[str] = []
    url: str | None = "/api/v1/namespaces?limit=500"
    while url:
        response = api.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        listed.extend(item["namespace"] for item in body["results"])
        url = body["next"]
    assert listed == names
    last = api.get("/api/v1/namespaces?offset=1599").json()["results"]
    assert [item["namespace"] for item in last] == names[-1:]
    assert _problem_path(api.get("/api/v1/namespaces?offset=-1")) == ["/offset"]


CURSOR_LISTS = ["/api/v1/events", "/api/v1/jobs", "/api/v1/runs", "/api/v1/datasets"]


@pytest.mark.parametrize(
    "cursor",
    [
        "Zm9v",  # "foo"
        base64.b64encode(b"o=1").decode(),  # an offset with no position
        base64.b64encode(b"r=1").decode(),
        "AAAAAAAA",  # NUL bytes
        base64.b64encode(b"q=5").decode(),
    ],
)
def test_a_garbled_cursor_is_a_400_not_the_first_page(api, cursor) -> None:
    """docs/api.md: a cursor that is no position in the list's order (forged, garbled) is a
    400 invalid-cursor. One that decoded to no position read as the first page (200)."""
    make_job("a")
    make_job("b")
    urls = [*CURSOR_LISTS, "/api/v1/metadata", "/api/v1/changes"]
    for url in urls:
        response = api.get(url, {"cursor": cursor})
        assert response.status_code == 400, (url, response.content)
        assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-cursor"


def test_an_empty_cursor_is_the_first_page_and_served_cursors_page_through(api) -> None:
    ids = [make_job(f"job_{index}").id for index in range(5)]
    assert [item["id"] for item in results(api.get("/api/v1/jobs?cursor=&limit=5"))] == ids
    listed = follow_all(api, "/api/v1/jobs?limit=2")
    assert [item["id"] for item in listed] == ids
    last = api.get("/api/v1/jobs?limit=2").json()["next"]
    last = api.get(api.get(last).json()["next"]).json()
    back = api.get(last["previous"]).json()
    assert [item["id"] for item in back["results"]] == ids[2:4]
    assert [item["id"] for item in api.get(back["previous"]).json()["results"]] == ids[:2]

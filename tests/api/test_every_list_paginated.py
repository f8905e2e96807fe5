"""docs/architecture.md invariant 7, "every list is paginated", over routes found, not listed.

Every GET route of ``/api/v1`` (from the URLconf) and every reading of the Marquez mount
(``api.marquez.paths.ROUTES``) must be named below either as a list, or as something else
with the reason it is bounded; a new route fails here until someone says which. Every
``/api/v1`` list must then take a page size, refuse one over 500 and answer at most the
size asked with the link to the next page (tests/api/test_catalog.py checks the limits of
the lists it names; this checks that the names are all of them).
"""

import re
from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from api.marquez.paths import ROUTES
from catalog.models import RunDataset
from tests.api.factories import T0, add_alias, make_dataset, make_job, make_run

LISTS = {
    "api/v1/namespaces": "/api/v1/namespaces",
    "api/v1/changes": "/api/v1/changes",
    "api/v1/search": "/api/v1/search?q=orders",
    "api/v1/metadata": "/api/v1/metadata",
    "api/v1/jobs/<str:pk>/runs": "/api/v1/jobs/{job}/runs",
    "api/v1/datasets/<str:pk>/aliases": "/api/v1/datasets/{dataset}/aliases",
    "api/v1/runs/<str:run_id>/inputs": "/api/v1/runs/{run}/inputs",
    "api/v1/runs/<str:run_id>/outputs": "/api/v1/runs/{run}/outputs",
    "api/v1/jobs": "/api/v1/jobs",
    "api/v1/runs": "/api/v1/runs",
    "api/v1/datasets": "/api/v1/datasets",
    "api/v1/events": "/api/v1/events",
}
NOT_LISTS = {
    "api/v1/lineage/graph": "a walk with a depth and node budget that says when it truncated",
    "api/v1/lineage/diff": "two walks, each with the graph's budget",
    "api/v1/impact": "a walk with the graph's budget",
    "api/v1/events/export": "an NDJSON stream in keyset chunks of bounded bytes",
    "api/v1/stats": "headline figures",
    "api/v1/jobs/(?P<pk>[^/.]+)": "one object",
    "api/v1/runs/(?P<run_id>.+)": "one object",
    "api/v1/datasets/lookup": "one object",
    "api/v1/datasets/(?P<pk>[^/.]+)": "one object",
    "api/v1/events/(?P<pk>[^/.]+)": "one object",
}
MARQUEZ_LISTS = {
    "namespaces",
    "namespaces/{namespace}/jobs",
    "namespaces/{namespace}/jobs/{job}/runs",
    "namespaces/{namespace}/datasets",
    "namespaces/{namespace}/datasets/{dataset}/versions",
    "jobs",
    "search",
    "tags",
    "events",
    "events/lineage",
    "events/{namespace}",
}
MARQUEZ_NOT_LISTS = {
    "namespaces/{namespace}": "one object",
    "namespaces/{namespace}/jobs/{job}": "one object",
    "namespaces/{namespace}/datasets/{dataset}": "one object",
    "namespaces/{namespace}/datasets/{dataset}/versions/{version}": "one object",
    "jobs/runs/{run}": "one object",
    "jobs/runs/{run}/facets": "one run's facets",
    "lineage": "the graph's walk, with its budget",
    "column-lineage": "a walk with a node budget",
    "sources": "always empty",
    "sources/{source}": "one object (always 404)",
    "stats/lineage-events": "figures",
    "stats/{asset}": "figures",
}


def get_routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    """The URL patterns of ``/api/v1`` whose view answers GET."""
    for entry in (resolver or get_resolver()).url_patterns:
        pattern = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from get_routes(entry, pattern)
        elif isinstance(entry, URLPattern) and pattern.startswith("api/v1/"):
            actions = getattr(entry.callback, "actions", None)
            view = getattr(entry.callback, "cls", None)
            if ("get" in actions) if actions else hasattr(view, "get"):
                yield re.sub(r"(?<=/)\^|\$$", "", pattern)  # the router's anchors


def test_every_read_route_is_named_a_list_or_says_why_it_is_bounded() -> None:
    found = set(get_routes())
    assert not LISTS.keys() & NOT_LISTS.keys()
    assert found == LISTS.keys() | NOT_LISTS.keys(), (
        "a route is neither a named list nor named bounded:",
        found ^ (LISTS.keys() | NOT_LISTS.keys()),
    )


def test_every_marquez_reading_is_named_a_list_or_says_why_it_is_bounded() -> None:
    readings = {route.pattern for route in ROUTES if route.read is not None}
    assert not MARQUEZ_LISTS & MARQUEZ_NOT_LISTS.keys()
    assert readings == MARQUEZ_LISTS | MARQUEZ_NOT_LISTS.keys(), readings ^ (
        MARQUEZ_LISTS | MARQUEZ_NOT_LISTS.keys()
    )


@pytest.mark.django_db
@pytest.mark.parametrize("route", sorted(LISTS))
def test_every_list_answers_a_page_of_the_size_asked(api, route) -> None:
    job = make_job("etl.load")
    make_job("etl.report")
    dataset = make_dataset("shop.public.orders")
    add_alias(dataset, "hive://meta:9083", "shop.orders")
    run = make_run(job)
    for alias in dataset.aliases.all():  # two inputs and two outputs
        for direction in ("input", "output"):
            RunDataset.objects.create(
                run=run, alias=alias, direction=direction, first_seen=T0, last_seen=T0
            )
    url = LISTS[route].format(job=job.id, dataset=dataset.id, run=run.run_uuid)
    join = "&" if "?" in url else "?"
    assert api.get(f"{url}{join}limit=501").status_code == 400, route
    response = api.get(f"{url}{join}limit=1")
    assert response.status_code == 200, (route, response.content)
    body = response.json()
    assert len(body["results"]) <= 1, route
    assert "next" in body, route

"""Raw-path routing, a decoded path's readings and Marquez's nodeId parsing (no database)."""

import time

import pytest

from api.marquez.errors import MarquezError
from api.marquez.paths import (
    MAX_READINGS,
    MAX_SEGMENTS,
    NodeId,
    Route,
    parse_node_id,
    raw_rest,
    resolve,
    resolve_all,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "dataset:food_delivery:public.delivery_7_days",
            NodeId("dataset", "food_delivery", "public.delivery_7_days"),
        ),
        (
            "dataset:postgres://db:5432:shop.public.orders",
            NodeId("dataset", "postgres://db:5432", "shop.public.orders"),
        ),
        ("dataset:s3://lake:raw/orders/daily", NodeId("dataset", "s3://lake", "raw/orders/daily")),
        ("dataset:kafka://broker:9092:orders", NodeId("dataset", "kafka://broker:9092", "orders")),
        ("job:airflow:etl.load", NodeId("job", "airflow", "etl.load")),
        (
            "datasetField:postgres://db:5432:shop.public.orders:amount",
            NodeId("datasetField", "postgres://db:5432", "shop.public.orders", "amount"),
        ),
        # Marquez's client appends "#<version>": the catalog answers the current graph.
        (
            "dataset:s3://lake:raw/orders#01930000-0000-7000-8000-000000000001",
            NodeId("dataset", "s3://lake", "raw/orders"),
        ),
        # A ":" the split cannot place belongs to the name.
        ("dataset:hive://meta:9083:db:table", NodeId("dataset", "hive://meta:9083", "db:table")),
    ],
)
def test_node_ids_split_like_marquez(text: str, expected: NodeId) -> None:
    assert parse_node_id(text) == expected


@pytest.mark.parametrize("text", ["table:a:b", "dataset:only-namespace", "dataset::name", "job"])
def test_malformed_node_ids_are_400(text: str) -> None:
    with pytest.raises(MarquezError) as caught:
        parse_node_id(text)
    assert caught.value.code == 400


def test_raw_path_keeps_names_with_slashes_apart() -> None:
    raw = "namespaces/s3%3A%2F%2Flake/datasets/raw%2Forders%2Fdaily/versions"
    route = resolve("namespaces/s3://lake/datasets/raw/orders/daily/versions", raw)
    assert route is not None and route.handler == "dataset_versions"
    assert route.kwargs == {"namespace": "s3://lake", "dataset": "raw/orders/daily"}


def test_raw_path_names_can_hold_keywords() -> None:
    """A dataset literally named "x/versions" is told apart only by the raw path."""
    raw = "namespaces/ns/datasets/x%2Fversions"
    route = resolve("namespaces/ns/datasets/x/versions", raw)
    assert route is not None and route.handler == "dataset"
    assert route.kwargs == {"namespace": "ns", "dataset": "x/versions"}


def test_decoded_fallback_reads_names_up_to_the_next_keyword() -> None:
    route = resolve("namespaces/s3://lake/datasets/raw/orders/daily/versions", None)
    assert route is not None and route.handler == "dataset_versions"
    assert route.kwargs == {"namespace": "s3://lake", "dataset": "raw/orders/daily"}
    route = resolve("events/lineage", None)
    assert route is not None and route.kwargs == {}


def test_fixed_routes_win_over_names() -> None:
    assert resolve("events/lineage", "events/lineage").kwargs == {}  # type: ignore[union-attr]
    assert resolve("events/airflow", "events/airflow").kwargs == {"namespace": "airflow"}  # type: ignore[union-attr]
    assert resolve("stats/lineage-events", "stats/lineage-events").handler == "stats_lineage_events"  # type: ignore[union-attr]
    assert resolve("nowhere/at/all", "nowhere/at/all") is None


def test_decoded_paths_list_every_reading_the_usual_one_first() -> None:
    """Without a raw path a dataset named "x/versions" is one of the readings, not lost."""
    assert resolve_all("namespaces/ns/datasets/x/versions") == [
        Route("dataset_versions", {"namespace": "ns", "dataset": "x"}),
        Route("dataset", {"namespace": "ns", "dataset": "x/versions"}),
        Route("namespace", {"namespace": "ns/datasets/x/versions"}),
    ]


def test_decoded_readings_split_names_on_whole_segments_shorter_earlier_names_first() -> None:
    readings = resolve_all("namespaces/s3://lake/datasets/raw/orders/daily")
    assert readings[0] == Route(
        "dataset", {"namespace": "s3://lake", "dataset": "raw/orders/daily"}
    )
    job_runs = resolve_all("/namespaces/team/jobs/nightly/jobs/load/runs/")
    assert job_runs[:2] == [
        Route("job_runs", {"namespace": "team", "job": "nightly/jobs/load"}),
        Route("job_runs", {"namespace": "team/jobs/nightly", "job": "load"}),
    ]
    assert resolve_all("namespaces//datasets") == [Route("namespace", {"namespace": "/datasets"})]


def test_decoded_readings_keep_fixed_routes_first() -> None:
    assert resolve_all("events/lineage")[0] == Route("events", {})
    assert resolve_all("stats/lineage-events")[0] == Route("stats_lineage_events", {})
    assert resolve_all("nowhere/at/all") == []


@pytest.mark.parametrize(
    "path",
    [
        "namespaces/s3://lake/datasets/raw/orders/daily/versions",
        "namespaces/ns/jobs/a/jobs/b/runs",
        "jobs/runs/r/facets/x",
        "events/lineage/lineage",
        "namespaces/ns/datasets/t/fields/f/tags/pii",
    ],
)
def test_the_first_reading_is_the_one_resolve_gives(path: str) -> None:
    assert resolve_all(path)[0] == resolve(path, None)


def test_a_hostile_path_costs_a_bounded_number_of_readings_quickly() -> None:
    many = "namespaces/" + "datasets/" * (MAX_SEGMENTS - 2) + "x"
    assert len(resolve_all(many)) == MAX_READINGS
    # 500 segments of keywords: a backtracking regex tries names pairwise (seconds at a few
    # thousand); the readings are worked out in one pass per route, and only the first kept.
    hostile = "namespaces/" + "datasets/fields/" * 250 + "x"
    started = time.perf_counter()
    readings = resolve_all(hostile)
    first = resolve(hostile, None)
    assert time.perf_counter() - started < 0.25
    assert readings == [first]
    assert first is not None and first.handler == "dataset"
    assert first.kwargs["namespace"] == "datasets/fields"


def test_raw_rest_strips_the_mount_and_query() -> None:
    meta = {"RAW_URI": "/marquez/api/v1/namespaces/a%2Fb?limit=5"}
    assert raw_rest(meta, "/marquez/api/v1/namespaces/a/b", "namespaces/a/b") == "namespaces/a%2Fb"
    assert raw_rest({}, "/marquez/api/v1/tags", "tags") is None
    absolute = {"REQUEST_URI": "http://host:8000/marquez/api/v1/tags"}
    assert raw_rest(absolute, "/marquez/api/v1/tags", "tags") == "tags"


@pytest.mark.parametrize(
    ("path", "mount"),
    [
        ("/api/v1/namespaces", True),
        ("/api/v1/namespaces/s3://lake/datasets/raw/orders", True),
        ("/api/v1/lineage", True),
        ("/api/v1/stats", False),  # the catalog's own, reached by the resolver itself
        ("/api/v1/lineage/graph", False),
    ],
)
def test_a_marquez_host_sends_only_marquez_paths_to_the_mount(path: str, mount: bool) -> None:
    """The host URL map matches a path only when the route table reads it: no catch-all,
    so no dispatch back into config.urls (ADR 0068)."""
    from django.urls import resolve as resolve_url

    from api.marquez.views import entry

    match = resolve_url(path, urlconf="api.marquez.hosts")
    assert (match.func is entry) is mount, match

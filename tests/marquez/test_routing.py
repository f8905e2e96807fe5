"""Raw-path routing and Marquez's nodeId parsing (no database)."""

import pytest

from api.marquez.errors import MarquezError
from api.marquez.paths import NodeId, parse_node_id, raw_rest, resolve


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


def test_raw_rest_strips_the_mount_and_query() -> None:
    meta = {"RAW_URI": "/marquez/api/v1/namespaces/a%2Fb?limit=5"}
    assert raw_rest(meta, "/marquez/api/v1/namespaces/a/b", "namespaces/a/b") == "namespaces/a%2Fb"
    assert raw_rest({}, "/marquez/api/v1/tags", "tags") is None
    absolute = {"REQUEST_URI": "http://host:8000/marquez/api/v1/tags"}
    assert raw_rest(absolute, "/marquez/api/v1/tags", "tags") == "tags"

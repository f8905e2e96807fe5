"""Issue 26: one column-lineage model, read alike by the native API and the Marquez mount.

Every fixture event file with column lineage goes in through ingest and is derived; the
native graph (``columns=true``) and Marquez's ``/column-lineage`` must then give the same
column edges into every dataset that has some (same endpoints, same transformations).
The written fixtures (tests/fixtures/openlineage/SOURCES.md, last section) check what the
issue found missing: dbt-ol's default mode (a staging model lists no seed, its column
lineage names it), dataset-level dependencies, and the producer's field-level form.
"""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from api.marquez import paths
from catalog.models import ColumnLineageEdge, Dataset
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.conftest import CORPUS
from tests.ingest.corpus import corpus_files
from tests.ingest.helpers import BATCH, LINEAGE
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

WRITTEN = CORPUS / "written"
DBT = WRITTEN / "dbt_default_mode_seeds_staging_marts.json"
HIVE = WRITTEN / "hive_cte_joins_dataset_dependencies.json"
PG = "postgres://localhost:5432"
HIVE_NS = "hive://localhost:9083"


def _has_column_lineage(document: Any) -> bool:
    events = document if isinstance(document, list) else [document]
    return any(
        isinstance(output, dict) and "columnLineage" in (output.get("facets") or {})
        for event in events
        if isinstance(event, dict)
        for output in event.get("outputs") or []
    )


WITH_COLUMN_LINEAGE = [
    item.path
    for item in (corpus_files(CORPUS) if CORPUS.is_dir() else [])
    if item.parses
    and not item.invalid_on_purpose
    and _has_column_lineage(orjson.loads((CORPUS / item.path).read_bytes()))
]


@pytest.fixture
def mz(api: Client) -> MarquezClient:
    return MarquezClient(api)


def ingest(client: Client, path: Path) -> None:
    raw = path.read_bytes()
    url = BATCH if isinstance(orjson.loads(raw), list) else LINEAGE
    response = client.post(url, data=raw, content_type="application/json")
    assert response.status_code in (200, 201), response.content
    result = derive_events(list(Event.objects.values_list("id", flat=True)))
    assert result.failed == 0, result.errors


def native_edges_into(api: Client, dataset: Dataset) -> set[tuple[str, ...]]:
    body = api.get(
        "/api/v1/lineage/graph",
        {"node": f"dataset:{dataset.id}", "direction": "upstream", "depth": 1, "columns": "true"},
    ).json()
    names = {n["id"]: (n["namespace"], n["name"]) for n in body["nodes"] if n["type"] == "dataset"}
    return {
        (
            *names[edge["source"]],
            edge["source_field"],
            edge["target_field"],
            edge["transformation_type"],
            edge["transformation_description"],
        )
        for edge in body["column_edges"]
        if edge["target"] == f"dataset:{dataset.id}"
    }


def marquez_edges_into(mz: MarquezClient, dataset: Dataset) -> set[tuple[str, ...]]:
    # Any of its names whose Marquez node id reads back unchanged (a namespace with a ":"
    # but no "://" splits differently, in Marquez too).
    for alias in dataset.aliases.order_by("id"):
        node = paths.node_id("dataset", alias.namespace, alias.name)
        parsed = paths.parse_node_id(node)
        if (parsed.namespace, parsed.name) == (alias.namespace, alias.name):
            break
    response = mz.get("/column-lineage", nodeId=node, depth="1")
    assert response.status_code == 200, response.content
    return {
        (
            source["namespace"],
            source["dataset"],
            source["field"],
            item["data"]["field"],
            source["transformationType"] or "",
            source["transformationDescription"] or "",
        )
        for item in response.json()["graph"]
        if (item["data"]["namespace"], item["data"]["dataset"]) == (dataset.namespace, dataset.name)
        for source in item["data"]["inputFields"]
    }


def test_the_fixtures_with_column_lineage_are_found() -> None:
    assert len(WITH_COLUMN_LINEAGE) >= 15
    assert {"written/dbt_default_mode_seeds_staging_marts.json"} <= set(WITH_COLUMN_LINEAGE)


@pytest.mark.parametrize("relative", WITH_COLUMN_LINEAGE)
def test_native_api_and_marquez_mount_give_the_same_column_edges(
    ingest_client: Client, api: Client, mz: MarquezClient, relative: str
) -> None:
    ingest(ingest_client, CORPUS / relative)
    targets = Dataset.objects.filter(
        id__in=ColumnLineageEdge.objects.exclude(target_field="").values("target_id")
    ).order_by("id")
    assert targets, "the fixture's column lineage derived no column edge"
    for target in targets:
        native = native_edges_into(api, target)
        assert native, f"no column edge into {target} in the native graph"
        assert native == marquez_edges_into(mz, target), target


def _dataset(namespace: str, name: str) -> Dataset:
    return Dataset.objects.for_alias(namespace, name).get()


def test_dbt_default_mode_seeds_staging_marts_is_complete(
    ingest_client: Client, api: Client, mz: MarquezClient
) -> None:
    ingest(ingest_client, DBT)
    mart = _dataset(PG, "dbt_test.main.customer_analytics")
    body = api.get(
        "/api/v1/lineage/graph",
        {"node": f"dataset:{mart.id}", "direction": "upstream", "depth": 3, "columns": "true"},
    ).json()
    names = {n["id"]: n["name"] for n in body["nodes"]}
    assert {
        "dbt_test.main.raw_customers",
        "dbt_test.main.raw_orders",
        "dbt_test.main.stg_customers",
        "dbt_test.main.stg_orders",
        "dbt_test.main.openlineage_compatibility_test.raw_orders",  # the seed job
    } <= set(names.values())
    seed_inputs = {
        (names[edge["source"]], names[edge["target"]], edge["via"])
        for edge in body["edges"]
        if edge["kind"] == "input" and names[edge["source"]].split(".")[-1].startswith("raw_")
    }
    job = "dbt_test.main.openlineage_compatibility_test."
    assert seed_inputs == {
        ("dbt_test.main.raw_customers", job + "stg_customers", "column_lineage"),
        ("dbt_test.main.raw_orders", job + "stg_orders", "column_lineage"),
    }
    # The mart's inputs were listed by its events.
    assert {
        edge["via"]
        for edge in body["edges"]
        if edge["kind"] == "input" and names[edge["target"]] == job + "customer_analytics"
    } == {""}
    # Every column edge dbt-ol sent: 6 + 7 from the staging models, 9 from the mart.
    assert len(body["column_edges"]) == 22
    assert all(edge["current"] for edge in body["column_edges"] + body["edges"])
    # Marquez's graph around a staging model shows the seed it reads.
    staging = paths.node_id("dataset", PG, "dbt_test.main.stg_orders")
    graph = mz.get("/lineage", nodeId=staging, depth="1").json()["graph"]
    assert paths.node_id("dataset", PG, "dbt_test.main.raw_orders") in {n["id"] for n in graph}


def test_dataset_level_dependencies_and_every_transformation_are_served(
    ingest_client: Client, api: Client, mz: MarquezClient
) -> None:
    ingest(ingest_client, HIVE)
    target = _dataset(HIVE_NS, "test.xxx")
    t3 = _dataset(HIVE_NS, "test.t3")
    body = api.get(
        "/api/v1/lineage/graph", {"node": f"dataset:{target.id}", "columns": "true"}
    ).json()
    names = {n["id"]: n["name"] for n in body["nodes"]}
    # test.t3 is only named in the column lineage: it is an input all the same.
    assert [edge["via"] for edge in body["edges"] if edge["source"] == f"dataset:{t3.id}"] == [
        "column_lineage"
    ]
    dependencies = {
        (
            names[d["source"]],
            d["source_field"],
            d["transformation_type"],
            d["transformation_subtype"],
        )
        for d in body["dataset_dependencies"]
    }
    assert dependencies == {
        ("test.t3", "d", "INDIRECT", "SORT"),
        ("test.t3", "d", "INDIRECT", "GROUP_BY"),
        ("test.t2", "a", "INDIRECT", "JOIN"),
        ("test.t2", "a", "INDIRECT", "FILTER"),
        ("test.t1", "b", "INDIRECT", "FILTER"),
        ("test.t2", "c", "INDIRECT", "FILTER"),
        ("test.t3", "a", "INDIRECT", "JOIN"),
    }
    assert all(
        d["target"] == f"dataset:{target.id}" and d["current"] for d in body["dataset_dependencies"]
    )
    by_field = {edge["target_field"]: edge for edge in body["column_edges"]}
    assert (by_field["d"]["transformation_type"], by_field["d"]["transformation_subtype"]) == (
        "DIRECT",
        "IDENTITY",
    )
    assert (
        by_field["d"]["field_transformation_type"],
        by_field["d"]["field_transformation_description"],
    ) == ("IDENTITY", "identical")
    assert by_field["md"]["masking"] is True
    assert by_field["md"]["transformation_subtype"] == "AGGREGATION"

    detail = api.get(f"/api/v1/datasets/{target.id}").json()
    assert {(e["target_field"], e["source_name"]) for e in detail["column_lineage"]} == {
        ("a", "test.t1"),
        ("d", "test.t3"),
        ("md", "test.t3"),
    }
    assert len(detail["dataset_dependencies"]) == 7

    # Marquez's field node shows the producer's own field-level form.
    node = paths.node_id("datasetField", HIVE_NS, "test.xxx", "d")
    graph = mz.get("/column-lineage", nodeId=node, depth="1").json()["graph"]
    data = next(item["data"] for item in graph if item["id"] == node)
    assert (data["transformationType"], data["transformationDescription"]) == (
        "IDENTITY",
        "identical",
    )
    assert data["inputFields"][0]["transformationType"] == "DIRECT"

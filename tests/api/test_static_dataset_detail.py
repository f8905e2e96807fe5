"""Declared (static) column edges in the dataset detail: what a job's current JobEvent
states about the columns of a dataset is in ``/api/v1/datasets/{id}`` (and the lookup)
beside the observed column edges, marked ``static`` as in the graph, and filtered by the
graph's ``?lineage=observed|static|all`` (issue 26, ADR 0061)."""

import pytest

from tests.api.project_fixtures import derive
from tests.api.test_static_column_lineage_model import RUN, _declaration
from tests.api.test_static_lineage import WAREHOUSE, dataset_id
from tests.catalog.conftest import run_event

pytestmark = pytest.mark.django_db


def _detail(api, dataset, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    response = api.get(f"/api/v1/datasets/{dataset}?{query}")
    assert response.status_code == 200, response.content
    return response.json()


def _observed_run():
    """A run of the declaring job whose output carries column lineage of its own."""
    staged = {
        "namespace": WAREHOUSE,
        "name": "shop.staging.stg_orders",
        "facets": {
            "columnLineage": {
                "_producer": "https://example.com/test",
                "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
                "fields": {
                    "order_id": {
                        "inputFields": [
                            {
                                "namespace": WAREHOUSE,
                                "name": "shop.raw.orders",
                                "field": "id",
                                "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                            }
                        ]
                    }
                },
            }
        },
    }
    return run_event(
        "COMPLETE",
        5,
        RUN,
        job=("dbt://analytics", "shop.stg_orders"),
        inputs=[{"namespace": WAREHOUSE, "name": "shop.raw.orders"}],
        outputs=[staged],
    )


def test_the_detail_lists_declared_column_edges_and_dependencies_marked_static(api):
    derive(_declaration())
    raw, staged = dataset_id("shop.raw.orders"), dataset_id("shop.staging.stg_orders")
    body = _detail(api, staged)
    assert body["column_lineage"], body
    assert all(edge["static"] and not edge["current"] for edge in body["column_lineage"])
    assert all(edge["run_count"] == 0 for edge in body["column_lineage"])
    by_field = {edge["target_field"]: edge for edge in body["column_lineage"]}
    order_id = by_field["order_id"]
    # Named as the observed ones are, with both transformation forms.
    assert (order_id["source"], order_id["source_name"], order_id["source_namespace"]) == (
        f"dataset:{raw}",
        "shop.raw.orders",
        WAREHOUSE,
    )
    assert (order_id["transformation_subtype"], order_id["field_transformation_type"]) == (
        "IDENTITY",
        "DIRECT",
    )
    [dependency] = body["dataset_dependencies"]
    assert (dependency["source_name"], dependency["source_field"], dependency["static"]) == (
        "shop.raw.orders",
        "status",
        True,
    )
    assert "target_field" not in dependency
    # The graph's upstream column edges are the same declared edges.
    graph = api.get(
        f"/api/v1/lineage/graph?node=dataset:{staged}&direction=upstream&columns=true"
    ).json()
    native = {(e["source"], e["source_field"], e["target_field"]) for e in graph["column_edges"]}
    detail = {(e["source"], e["source_field"], e["target_field"]) for e in body["column_lineage"]}
    assert detail == native


def test_lineage_filters_observed_and_declared_as_in_the_graph(api):
    derive(_declaration(), _observed_run())
    staged = dataset_id("shop.staging.stg_orders")

    def kinds(body):
        return sorted(
            (edge["static"], edge["target_field"], edge["source_field"])
            for edge in body["column_lineage"]
        )

    everything = kinds(_detail(api, staged))
    observed = kinds(_detail(api, staged, lineage="observed"))
    declared = kinds(_detail(api, staged, lineage="static"))
    assert observed == [(False, "order_id", "id")]
    assert declared and all(static for static, *_ in declared)
    assert everything == sorted(observed + declared)
    # The observed edge is current (the job's latest run produced it), a declared never.
    [edge] = _detail(api, staged, lineage="observed")["column_lineage"]
    assert edge["current"] and edge["run_count"] == 1
    assert _detail(api, staged, lineage="observed")["dataset_dependencies"] == []
    # The lookup answers with the same detail.
    looked_up = api.get(
        f"/api/v1/datasets/lookup?namespace={WAREHOUSE}&name=shop.staging.stg_orders&lineage=static"
    ).json()
    assert kinds(looked_up) == declared


def test_an_unknown_lineage_is_a_400_problem(api):
    derive(_declaration())
    response = api.get(f"/api/v1/datasets/{dataset_id('shop.staging.stg_orders')}?lineage=designed")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert "lineage" in response.json()["detail"]

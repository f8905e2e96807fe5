"""Static lineage on the one column-lineage model (ADR 0060 x ADR 0061): a JobEvent's
column lineage is read like a run's (both transformation forms, dataset-level
dependencies), served by catalog.lineage.column_lineage beside the observed edges and marked
``static``; declared edges say how the declaration names the dataset (``via``) and are
never ``current`` (no run produced them)."""

import copy

import pytest

from tests.api.project_fixtures import derive, fixture
from tests.api.test_static_lineage import WAREHOUSE, dataset_id, graph
from tests.catalog.conftest import dataset, run_event

pytestmark = pytest.mark.django_db

RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9ebb"


def _declaration() -> dict:
    """job_event_orders_v1 with a field-level form beside a per-input list and a
    dataset-level dependency (columnLineage 1-2-0's ``dataset``)."""
    event = copy.deepcopy(fixture("job_event_orders_v1"))
    facet = event["outputs"][0]["facets"]["columnLineage"]
    facet["fields"]["order_id"]["transformationType"] = "DIRECT"
    facet["fields"]["order_id"]["transformationDescription"] = "the order's key"
    facet["dataset"] = [
        {
            "namespace": WAREHOUSE,
            "name": "shop.raw.orders",
            "field": "status",
            "transformations": [{"type": "INDIRECT", "subtype": "FILTER", "description": ""}],
        }
    ]
    return event


def test_declared_column_edges_and_dependencies_come_from_the_column_lineage_model(api):
    derive(_declaration())
    raw, staged = dataset_id("shop.raw.orders"), dataset_id("shop.staging.stg_orders")
    body = graph(api, f"dataset:{staged}", direction="upstream", columns="true")
    by_field = {edge["target_field"]: edge for edge in body["column_edges"]}
    order_id = by_field["order_id"]
    assert (order_id["source"], order_id["transformation_subtype"]) == (
        f"dataset:{raw}",
        "IDENTITY",
    )
    # The field's older form is kept beside the per-input transformation, as for runs.
    assert (
        order_id["field_transformation_type"],
        order_id["field_transformation_description"],
    ) == (
        "DIRECT",
        "the order's key",
    )
    assert all(edge["static"] and not edge["current"] for edge in body["column_edges"])
    [dependency] = body["dataset_dependencies"]
    assert dependency["source"] == f"dataset:{raw}"
    assert (dependency["source_field"], dependency["transformation_subtype"]) == (
        "status",
        "FILTER",
    )
    assert dependency["static"] and dependency["run_count"] == 0
    assert "target_field" not in dependency
    observed = graph(api, f"dataset:{staged}", columns="true", lineage="observed")
    assert (observed["column_edges"], observed["dataset_dependencies"]) == ([], [])


def test_declared_edges_say_via_and_are_never_current_an_observed_one_is(api):
    derive(
        _declaration(),
        run_event(
            "COMPLETE",
            5,
            RUN,
            job=("dbt://analytics", "shop.stg_orders"),
            inputs=[dataset(WAREHOUSE, "shop.raw.orders")],
            outputs=[dataset(WAREHOUSE, "shop.staging.stg_orders")],
        ),
    )
    raw, customers = dataset_id("shop.raw.orders"), dataset_id("shop.raw.customers")
    staged = dataset_id("shop.staging.stg_orders")
    body = graph(api, f"dataset:{staged}", direction="upstream", columns="true")
    edges = {edge["source"]: edge for edge in body["edges"] if edge["kind"] == "input"}
    both, declared = edges[f"dataset:{raw}"], edges[f"dataset:{customers}"]
    assert (both["observed"], both["static"], both["current"], both["via"]) == (
        True,
        True,
        True,
        "",
    )
    # Only named in the declared output's column lineage, and no run read it.
    assert (declared["observed"], declared["static"], declared["current"], declared["via"]) == (
        False,
        True,
        False,
        "column_lineage",
    )
    # A declared column edge and an observed one are told apart by `static`.
    assert {edge["static"] for edge in body["column_edges"]} == {True}


def test_the_picture_draws_declared_edges_and_column_edges_never_stale():
    """Stale (grey) says a job's latest run stopped producing an edge; a declaration has no
    run, so its edges are dashed as static and its column edges drawn, never grey."""
    from catalog.lineage import graph
    from catalog.lineage.request import NodeRef
    from catalog.picture.build import Controls, build_picture
    from catalog.picture.layout import layout
    from catalog.picture.svg import render_svg

    derive(_declaration())
    staged = dataset_id("shop.staging.stg_orders")
    picture = build_picture(
        NodeRef("dataset", staged), Controls(depth=1, columns=True), lambda edge: "", graph
    )
    svg = str(render_svg(picture, layout(picture), "test"))
    assert svg.count("lc-edge lc-edge-static") == 3
    assert svg.count("lc-column-edge") >= 3  # two field edges, one dataset-level dependency
    assert "lc-stale" not in svg

"""Static (design-time) lineage: JobEvents' inputs, outputs and column lineage become
edges marked static, replaced by a newer JobEvent of the job, never by an older one;
DatasetEvents update the dataset without a run (issue 26 part 5, ADR 0061)."""

import copy

import pytest

from catalog.models import Dataset, Job, StaticColumnLineage, StaticDataset, StaticLineage
from tests.api.project_fixtures import derive, fixture
from tests.catalog.conftest import dataset, run_event

pytestmark = pytest.mark.django_db

WAREHOUSE = "postgres://warehouse:5432"


def graph(api, node, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    response = api.get(f"/api/v1/lineage/graph?node={node}&{query}")
    assert response.status_code == 200, response.content
    return response.json()


def dataset_id(name, namespace=WAREHOUSE):
    return Dataset.objects.for_alias(namespace, name).get().id


def edge_keys(body):
    return {
        (e["kind"], e["source"], e["target"], e["observed"], e["static"]) for e in body["edges"]
    }


def test_a_job_event_becomes_static_edges_and_column_edges(api):
    derive(fixture("job_event_orders_v1"))
    job = Job.objects.get(name="shop.stg_orders")
    raw, customers, staged = (
        dataset_id(name)
        for name in ("shop.raw.orders", "shop.raw.customers", "shop.staging.stg_orders")
    )
    body = graph(api, f"dataset:{staged}", direction="upstream", columns="true")
    assert edge_keys(body) == {
        ("input", f"dataset:{raw}", f"job:{job.id}", False, True),
        # Named only in the output's column lineage: an input all the same.
        ("input", f"dataset:{customers}", f"job:{job.id}", False, True),
        ("output", f"job:{job.id}", f"dataset:{staged}", False, True),
    }
    edge = body["edges"][0]
    assert (edge["run_count"], edge["last_run_id"]) == (0, None)
    assert edge["first_seen"] == edge["last_seen"] == "2026-03-01T08:00:00Z"
    columns = {
        (
            c["source"],
            c["source_field"],
            c["target_field"],
            c["transformation_subtype"],
            c["masking"],
        )
        for c in body["column_edges"]
    }
    assert columns == {
        (f"dataset:{raw}", "id", "order_id", "IDENTITY", False),
        (f"dataset:{customers}", "email", "customer_email", "TRANSFORMATION", True),
    }
    assert all(c["static"] and c["run_count"] == 0 for c in body["column_edges"])


def test_lineage_filters_observed_static_and_all(api):
    derive(
        fixture("job_event_orders_v1"),
        run_event(
            "COMPLETE",
            5,
            "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9eaa",
            job=("dbt://analytics", "shop.stg_orders"),
            inputs=[dataset(WAREHOUSE, "shop.raw.orders")],
            outputs=[dataset(WAREHOUSE, "shop.staging.stg_orders")],
        ),
    )
    staged, raw = dataset_id("shop.staging.stg_orders"), dataset_id("shop.raw.orders")
    customers = dataset_id("shop.raw.customers")
    node = f"dataset:{staged}"
    every = {(e["source"], e["target"]): e for e in graph(api, node)["edges"]}
    job = Job.objects.get(name="shop.stg_orders").id
    # Observed and declared: one edge, both marks; declared only: static alone.
    assert (
        every[(f"dataset:{raw}", f"job:{job}")]["observed"],
        every[(f"dataset:{raw}", f"job:{job}")]["static"],
    ) == (True, True)
    assert every[(f"dataset:{customers}", f"job:{job}")]["observed"] is False
    observed = graph(api, node, lineage="observed")
    assert {e["source"] for e in observed["edges"]} == {f"dataset:{raw}", f"job:{job}"}
    assert all(e["observed"] for e in observed["edges"])
    static = graph(api, node, lineage="static")
    assert {e["source"] for e in static["edges"]} == {
        f"dataset:{raw}",
        f"dataset:{customers}",
        f"job:{job}",
    }
    assert api.get(f"/api/v1/lineage/graph?node={node}&lineage=design").status_code == 400


@pytest.mark.parametrize("newer_first", [False, True])
def test_a_newer_job_event_replaces_the_declaration_and_an_older_one_does_not(api, newer_first):
    older, newer = fixture("job_event_orders_v1"), fixture("job_event_orders_v2")
    derive(*([newer, older] if newer_first else [older, newer]))
    job = Job.objects.get(name="shop.stg_orders")
    declared = {
        (row.alias.name, row.direction) for row in StaticDataset.objects.select_related("alias")
    }
    assert declared == {("shop.raw.orders_v2", "input"), ("shop.staging.stg_orders", "output")}
    assert not StaticColumnLineage.objects.exists()
    assert StaticLineage.objects.get(job=job).declared_at.isoformat() == "2026-03-02T08:00:00+00:00"
    body = graph(api, f"dataset:{dataset_id('shop.staging.stg_orders')}", direction="upstream")
    assert {e["source"] for e in body["edges"]} == {
        f"dataset:{dataset_id('shop.raw.orders_v2')}",
        f"job:{job.id}",
    }


def test_static_edges_are_kept_across_runs_and_a_job_event_without_io_keeps_them(api):
    derive(fixture("job_event_orders_v1"))
    facets_only = {**fixture("job_event_orders_v2"), "eventTime": "2026-03-05T08:00:00Z"}
    del facets_only["inputs"], facets_only["outputs"]
    derive(
        run_event(
            "COMPLETE",
            1,
            "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9eab",
            job=("dbt://analytics", "shop.stg_orders"),
        ),
        facets_only,
    )
    assert StaticDataset.objects.count() == 3


def test_a_job_root_walks_its_declared_datasets(api):
    derive(fixture("job_event_orders_v1"))
    job = Job.objects.get(name="shop.stg_orders")
    body = graph(api, f"job:{job.id}")
    assert {n["name"] for n in body["nodes"] if n["type"] == "dataset"} == {
        "shop.raw.orders",
        "shop.raw.customers",
        "shop.staging.stg_orders",
    }


def test_as_of_before_the_declaration_has_no_static_edge(api):
    derive(fixture("job_event_orders_v1"))
    body = graph(
        api, f"dataset:{dataset_id('shop.staging.stg_orders')}", as_of="2026-02-01T00:00:00Z"
    )
    assert body["edges"] == []


def test_the_marquez_mount_shows_static_edges(api):
    derive(fixture("job_event_orders_v1"))
    response = api.get(
        f"/marquez/api/v1/lineage?nodeId=dataset:{WAREHOUSE}:shop.staging.stg_orders"
    )
    assert response.status_code == 200, response.content
    nodes = {node["id"]: node for node in response.json()["graph"]}
    job = nodes["job:dbt://analytics:shop.stg_orders"]
    assert {edge["origin"] for edge in job["inEdges"]} == {
        f"dataset:{WAREHOUSE}:shop.raw.orders",
        f"dataset:{WAREHOUSE}:shop.raw.customers",
    }


def test_a_dataset_event_updates_schema_documentation_and_ownership_in_any_order(api):
    first = fixture("dataset_event_customers")
    later = copy.deepcopy(first)
    later["eventTime"] = "2026-03-02T09:00:00Z"
    later["dataset"]["facets"]["documentation"]["description"] = "Customers, deduplicated."
    later["dataset"]["facets"]["schema"]["fields"].append({"name": "country", "type": "char(2)"})
    derive(later, first)
    detail = api.get(f"/api/v1/datasets/{dataset_id('shop.raw.customers')}").json()
    assert detail["description"] == "Customers, deduplicated."
    assert [field["name"] for field in detail["fields"]] == ["id", "email", "country"]
    assert detail["facets"]["ownership"]["owners"] == [
        {"name": "team:shop-backend", "type": "MAINTAINER"}
    ]


def test_the_first_declaration_is_drawn_by_the_next_graph(api):
    """A graph of a store that declares nothing skips the static reads (ADR 0104): the
    store is asked anew by every graph, so a declaration committed after one graph is in
    the next."""
    derive(
        run_event(
            "COMPLETE",
            5,
            "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9eab",
            job=("dbt://analytics", "shop.stg_orders"),
            inputs=[dataset(WAREHOUSE, "shop.raw.orders")],
            outputs=[dataset(WAREHOUSE, "shop.staging.stg_orders")],
        )
    )
    staged = dataset_id("shop.staging.stg_orders")
    before = graph(api, f"dataset:{staged}", direction="upstream")
    assert {key[3:] for key in edge_keys(before)} == {(True, False)}
    derive(fixture("job_event_orders_v1"))
    after = graph(api, f"dataset:{staged}", direction="upstream")
    customers = dataset_id("shop.raw.customers")
    assert ("input", f"dataset:{customers}", after["edges"][0]["target"], False, True) in (
        edge_keys(after)
    )
    assert all(edge["static"] for edge in after["edges"])

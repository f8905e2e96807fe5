"""/api/v1 and retirement (ADR 0078): lists hide it, ``?retired=true`` lists it, the
detail by id says it, search and the graph drop it, in the same number of queries."""

from urllib.parse import quote

import pytest

from catalog.models import Dataset, Job
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.admin.conftest import groups, reader, reader_client, steward, steward_client
from tests.api.factories import make_dataset, make_edge, make_job
from tests.api.project_fixtures import derive, fixture

# Sessions of the admin's groups (catalog.permissions): a steward, a catalog reader.
__all__ = ["groups", "reader", "reader_client", "steward", "steward_client"]

WAREHOUSE = "postgres://warehouse:5432"

pytestmark = pytest.mark.django_db


@pytest.fixture
def chain():
    """orders → (load) → daily → (report) → totals; ``load`` is then retired."""
    orders, daily, totals = (make_dataset(f"shop.{n}") for n in ("orders", "daily", "totals"))
    load, report = make_job("load"), make_job("report")
    make_edge(orders, daily, load)
    make_edge(daily, totals, report)
    retirement.retire(load, Actor("token:ci"), "switched off")
    return orders, daily, totals, load, report


def test_lists_hide_it_and_retired_true_lists_it(api, steward_client, chain):
    load = chain[3]
    names = [row["name"] for row in api.get("/api/v1/jobs").json()["results"]]
    assert names == ["report"]
    retired = steward_client.get("/api/v1/jobs", {"retired": "true"}).json()["results"]
    assert [row["name"] for row in retired] == ["load"]
    detail = steward_client.get(f"/api/v1/jobs/{load.pk}").json()
    assert detail["retired"]["by"] == "token:ci" and detail["retired"]["reason"] == "switched off"
    assert api.get(f"/api/v1/jobs/{chain[4].pk}").json()["retired"] is None


def test_only_a_steward_reads_what_is_retired_by_id(api, reader_client, steward_client, chain):
    """A read token and a catalog reader get 404 for a retired dataset's or job's detail and
    403 for ``?retired=true``, as the lists and the Marquez mount; a steward, who may
    restore it, reads it."""
    daily, load = chain[1], chain[3]
    retirement.retire(daily, Actor("stew"), "dropped")
    for path, kind in (
        (f"/api/v1/jobs/{load.pk}", "jobs"),
        (f"/api/v1/datasets/{daily.pk}", "datasets"),
    ):
        for client in (api, reader_client):
            assert client.get(path).status_code == 404
            assert client.get(f"/api/v1/{kind}", {"retired": "true"}).status_code == 403
        assert steward_client.get(path).json()["retired"]["by"] in {"token:ci", "stew"}
    retirement.restore(daily, Actor("stew"))
    assert api.get(f"/api/v1/datasets/{daily.pk}").json()["retired"] is None


def test_no_graph_path_runs_through_a_retired_job(api, chain):
    orders, daily, totals = chain[:3]
    graph = api.get("/api/v1/lineage/graph", {"node": f"dataset:{totals.pk}"}).json()
    ids = {node["id"] for node in graph["nodes"]}
    assert f"dataset:{daily.pk}" in ids and f"dataset:{orders.pk}" not in ids


def test_a_retired_dataset_is_no_node_and_not_found(api, chain):
    daily = chain[1]
    retirement.retire(daily, Actor("stew"))
    assert api.get("/api/v1/lineage/graph", {"node": f"dataset:{daily.pk}"}).status_code == 404
    hits = api.get("/api/v1/search", {"q": "daily"}).json()["results"]
    assert not [hit for hit in hits if hit["id"] == daily.pk]
    namespaces = api.get("/api/v1/namespaces").json()["results"]
    assert [row["datasets"] for row in namespaces if row["namespace"].startswith("postgres")] == [2]


def test_a_retired_jobs_declared_lineage_draws_no_path(api):
    """A job's declared (static) inputs and outputs are filtered like its observed edges:
    from a dataset the retired job declares reading, neither /api/v1 nor the Marquez mount
    reaches the dataset it declares writing."""
    derive(fixture("job_event_orders_v1"))
    job = Job.objects.get(name="shop.stg_orders")
    raw, staged = (
        Dataset.objects.for_alias(WAREHOUSE, name).get()
        for name in ("shop.raw.orders", "shop.staging.stg_orders")
    )
    marquez = f"/marquez/api/v1/lineage?nodeId={quote(f'dataset:{WAREHOUSE}:{raw.name}', safe='')}"

    def reached() -> tuple[set[str], set[str]]:
        graph = api.get("/api/v1/lineage/graph", {"node": f"dataset:{raw.pk}"}).json()
        mount = api.get(marquez).json()["graph"]
        return {node["id"] for node in graph["nodes"]}, {node["id"] for node in mount}

    ours, theirs = reached()
    assert f"dataset:{staged.pk}" in ours and f"job:{job.pk}" in ours
    assert f"dataset:{WAREHOUSE}:{staged.name}" in theirs
    retirement.retire(job, Actor("stew"), "switched off")
    assert reached() == ({f"dataset:{raw.pk}"}, {f"dataset:{WAREHOUSE}:{raw.name}"})
    retirement.restore(job, Actor("stew"))
    assert reached() == (ours, theirs)


def test_a_retired_dataset_is_no_declared_end(api):
    derive(fixture("job_event_orders_v1"))
    job = Job.objects.get(name="shop.stg_orders")
    raw, staged = (
        Dataset.objects.for_alias(WAREHOUSE, name).get()
        for name in ("shop.raw.orders", "shop.staging.stg_orders")
    )
    retirement.retire(staged, Actor("stew"))
    graph = api.get("/api/v1/lineage/graph", {"node": f"job:{job.pk}"}).json()
    nodes = {node["id"] for node in graph["nodes"]}
    assert f"dataset:{raw.pk}" in nodes and f"dataset:{staged.pk}" not in nodes
    assert [edge["kind"] for edge in graph["edges"]] == ["input"] * (len(nodes) - 1)

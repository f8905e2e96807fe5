"""A parent job shows its children's lineage (issue 31 item 2, ADR 0070): the graph from an
Airflow DAG's job draws its tasks, linked by ``parent`` edges, with their inputs and
outputs, through the native API, the Marquez mount and the admin picture. The events are
the ones Airflow 2.10.5 really sent (tests/fixtures/openlineage/airflow-2.10.5)."""

from typing import Any

import pytest
from django.test import Client

from catalog import graph_children
from catalog.models import Job
from tests.api.test_airflow_fixtures import FIVE, NAMESPACE, SHOP, TABLES, derived  # noqa: F401

pytestmark = pytest.mark.django_db


def _graph(api: Any, dag: str, **params: Any) -> dict[str, Any]:
    job = Job.objects.get(namespace=NAMESPACE, name=dag)
    response = api.get("/api/v1/lineage/graph", {"node": f"job:{job.pk}", **params})
    assert response.status_code == 200, response.content
    return response.json()


def _names(body: dict[str, Any], kind: str) -> set[str]:
    return {node["name"] for node in body["nodes"] if node["type"] == kind}


@pytest.mark.parametrize("dag,tasks", [("lc_five_tasks", FIVE), ("lc_shop_sql", SHOP)])
def test_the_dag_draws_its_tasks_and_their_datasets(
    api: Any, derived: None, dag: str, tasks: tuple[str, ...]
) -> None:
    body = _graph(api, dag)
    children = {f"{dag}.{task}" for task in tasks}
    assert _names(body, "job") == {dag} | children
    parents = [edge for edge in body["edges"] if edge["kind"] == "parent"]
    by_id = {node["id"]: node for node in body["nodes"]}
    assert {by_id[edge["target"]]["name"] for edge in parents} == children
    assert {by_id[edge["source"]]["name"] for edge in parents} == {dag}
    assert all(by_id[edge["target"]]["depth"] == 1 for edge in parents)
    # The tasks' own reads and writes are drawn as usual: every dataset they touch.
    tables = {name.removeprefix(TABLES) for name in _names(body, "dataset")}
    io = [edge for edge in body["edges"] if edge["kind"] in ("input", "output")]
    assert io and tables
    assert body["cut"] == {} and body["truncated"] is False


def test_the_five_task_dag_shows_the_visits_chain(api: Any, derived: None) -> None:
    body = _graph(api, "lc_five_tasks")
    by_id = {node["id"]: node for node in body["nodes"]}
    writers = {
        by_id[edge["source"]]["name"] for edge in body["edges"] if edge["kind"] == "output"
    }
    readers = {by_id[edge["target"]]["name"] for edge in body["edges"] if edge["kind"] == "input"}
    assert "lc_five_tasks.load_visits" in writers
    assert {"lc_five_tasks.by_day", "lc_five_tasks.by_page"} <= readers


def test_a_task_root_does_not_draw_its_siblings(api: Any, derived: None) -> None:
    body = _graph(api, "lc_five_tasks.announce")
    assert not [edge for edge in body["edges"] if edge["kind"] == "parent"]


def test_children_past_the_node_budget_are_reported_cut(api: Any, derived: None) -> None:
    body = _graph(api, "lc_five_tasks", max_nodes=3)
    assert len(_names(body, "job")) == 3  # the DAG and its first two tasks
    assert body["truncated"] is True
    assert body["cut"]["children"] == {"limit": 2, "omitted_jobs": 3}


def test_children_are_capped_per_parent(
    api: Any, derived: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_children, "CHILDREN_PER_PARENT", 4)
    body = _graph(api, "lc_five_tasks")
    assert len([edge for edge in body["edges"] if edge["kind"] == "parent"]) == 4
    assert body["cut"]["children"] == {"limit": 4, "omitted_jobs": 1}


def test_the_dag_graph_query_count_is_pinned(
    api: Any, derived: None, django_assert_num_queries: Any
) -> None:
    """A dataset root's 15 (tests/api/test_graph.py), + the job root's first hop (observed
    and static, one query each for the root and all its children), + the child jobs: the
    same however many tasks the DAG has."""
    job = Job.objects.get(namespace=NAMESPACE, name="lc_five_tasks")
    with django_assert_num_queries(18):
        api.get("/api/v1/lineage/graph", {"node": f"job:{job.pk}"})


def test_the_marquez_mount_draws_the_tasks_with_their_parent(
    read_client: Client, steady_token_cache: None, derived: None
) -> None:
    response = read_client.get(
        "/marquez/api/v1/lineage", {"nodeId": f"job:{NAMESPACE}:lc_five_tasks", "depth": "2"}
    )
    assert response.status_code == 200, response.content
    graph = {node["id"]: node for node in response.json()["graph"]}
    for task in FIVE:
        node = graph[f"job:{NAMESPACE}:lc_five_tasks.{task}"]
        assert node["data"]["parentJobName"] == "lc_five_tasks"
    dag = graph[f"job:{NAMESPACE}:lc_five_tasks"]
    assert dag["data"]["parentJobName"] is None
    # Marquez's edges are job ↔ dataset only: no job → job edge.
    for node in graph.values():
        for edge in node["inEdges"] + node["outEdges"]:
            kinds = {edge["origin"].split(":")[0], edge["destination"].split(":")[0]}
            assert kinds == {"job", "dataset"}
    assert any(graph[f"job:{NAMESPACE}:lc_five_tasks.load_visits"]["outEdges"])


def test_the_admin_dag_page_pictures_its_tasks(super_client: Client, derived: None) -> None:
    job = Job.objects.get(namespace=NAMESPACE, name="lc_five_tasks")
    page = super_client.get(f"/admin/catalog/job/{job.pk}/change/").content.decode()
    for task in FIVE:
        child = Job.objects.get(namespace=NAMESPACE, name=f"lc_five_tasks.{task}")
        assert f"/admin/catalog/job/{child.pk}/change/" in page
    assert "lc-edge-parent" in page or page.count("lc-edge") >= 5

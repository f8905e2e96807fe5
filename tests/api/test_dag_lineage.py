"""A parent job shows its children's lineage (issue 31 item 2, ADR 0070): the graph from an
Airflow DAG's job draws its tasks, linked by ``parent`` edges, with their inputs and
outputs, through the native API, the Marquez mount and the admin picture. The events are
the ones Airflow 2.10.5 really sent (tests/fixtures/openlineage/airflow-2.10.5)."""

from typing import Any

import pytest
from django.test import Client

from api.marquez import shapes
from catalog.lineage import child_jobs
from catalog.models import Job
from tests.api.test_airflow_fixtures import (  # noqa: F401 (_derived_once and derived are fixtures)
    FIVE,
    NAMESPACE,
    SHOP,
    TABLES,
    _derived_once,
    derived,
)

# Both DAGs are derived once for this module, by test_airflow_fixtures' fixtures (imported,
# so this module has its own instance): a test's own writes (a user, a monkeypatched cap)
# are rolled back to them (ADR 0113).

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("derived")]


def _graph(api: Any, dag: str, **params: Any) -> dict[str, Any]:
    job = Job.objects.get(namespace=NAMESPACE, name=dag)
    response = api.get("/api/v1/lineage/graph", {"node": f"job:{job.pk}", **params})
    assert response.status_code == 200, response.content
    return response.json()


def _names(body: dict[str, Any], kind: str) -> set[str]:
    return {node["name"] for node in body["nodes"] if node["type"] == kind}


@pytest.mark.parametrize("dag,tasks", [("lc_five_tasks", FIVE), ("lc_shop_sql", SHOP)])
def test_the_dag_draws_its_tasks_and_their_datasets(
    api: Any, dag: str, tasks: tuple[str, ...]
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


def test_the_five_task_dag_shows_the_visits_chain(api: Any) -> None:
    body = _graph(api, "lc_five_tasks")
    by_id = {node["id"]: node for node in body["nodes"]}
    writers = {by_id[edge["source"]]["name"] for edge in body["edges"] if edge["kind"] == "output"}
    readers = {by_id[edge["target"]]["name"] for edge in body["edges"] if edge["kind"] == "input"}
    assert "lc_five_tasks.load_visits" in writers
    assert {"lc_five_tasks.by_day", "lc_five_tasks.by_page"} <= readers


def test_a_task_root_does_not_draw_its_siblings(api: Any) -> None:
    body = _graph(api, "lc_five_tasks.announce")
    assert not [edge for edge in body["edges"] if edge["kind"] == "parent"]


def test_children_past_the_node_budget_are_reported_cut(api: Any) -> None:
    body = _graph(api, "lc_five_tasks", max_nodes=3)
    assert len(_names(body, "job")) == 3  # the DAG and its first two tasks
    assert body["truncated"] is True
    assert body["cut"]["children"] == {"limit": 2, "omitted_jobs": 3}


def test_children_are_capped_per_parent(api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_jobs, "CHILDREN_PER_PARENT", 4)
    body = _graph(api, "lc_five_tasks")
    assert len([edge for edge in body["edges"] if edge["kind"] == "parent"]) == 4
    assert body["cut"]["children"] == {"limit": 4, "omitted_jobs": 1}


def test_the_dag_graph_query_count_is_pinned(api: Any, django_assert_num_queries: Any) -> None:
    """A dataset root's 7 on a store that declares nothing (tests/api/test_graph.py), + the
    child jobs, - the depth-bound probes (nothing of this DAG is at the bound); the job
    root's first hop (for the root and all its children) is read by the walk's statement
    (static too, apart, once anything is declared): the same however many tasks the DAG has
    (18 before the walk, probes and nodes became one statement each, ADR 0099; 15 before
    the static reads were skipped on a store without declarations and the job edges read
    their currency, ADR 0104; 9 before the first hop was read by the walk, ADR 0133)."""
    job = Job.objects.get(namespace=NAMESPACE, name="lc_five_tasks")
    with django_assert_num_queries(7):
        api.get("/api/v1/lineage/graph", {"node": f"job:{job.pk}"})


def test_the_marquez_mount_draws_the_tasks_with_their_parent(
    read_client: Client, steady_token_cache: None
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
    # parentJobUuid is filled where Marquez fills it: one stable UUID for the DAG's job.
    parents = {
        graph[f"job:{NAMESPACE}:lc_five_tasks.{task}"]["data"]["parentJobUuid"] for task in FIVE
    }
    assert parents == {shapes.job_uuid(NAMESPACE, "lc_five_tasks")}
    assert dag["data"]["parentJobUuid"] is None
    # Marquez's edges are job ↔ dataset only: no job → job edge.
    for node in graph.values():
        for edge in node["inEdges"] + node["outEdges"]:
            kinds = {edge["origin"].split(":")[0], edge["destination"].split(":")[0]}
            assert kinds == {"job", "dataset"}
    assert any(graph[f"job:{NAMESPACE}:lc_five_tasks.load_visits"]["outEdges"])


def test_the_admin_dag_page_pictures_its_tasks(django_user_model: Any) -> None:
    super_client = Client()
    super_client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    job = Job.objects.get(namespace=NAMESPACE, name="lc_five_tasks")
    page = super_client.get(f"/admin/catalog/job/{job.pk}/change/").content.decode()
    for task in FIVE:
        child = Job.objects.get(namespace=NAMESPACE, name=f"lc_five_tasks.{task}")
        assert f"/admin/catalog/job/{child.pk}/change/" in page
    # The picture reads the same graph: a parent edge to each task, and the tasks' own I/O.
    assert page.count("lc-edge lc-edge-parent") == len(FIVE)
    assert "lc-edge lc-edge-output" in page and "lc-edge lc-edge-input" in page


def test_as_of_before_the_tasks_ran_draws_no_children(api: Any) -> None:
    body = _graph(api, "lc_five_tasks", as_of="2026-12-01T00:00:00Z")
    assert _names(body, "job") == {"lc_five_tasks"}
    assert body["cut"] == {}


def test_the_diff_adds_parent_edges_and_never_removes_them(api: Any) -> None:
    job = Job.objects.get(namespace=NAMESPACE, name="lc_five_tasks")
    response = api.get(
        "/api/v1/lineage/diff",
        {"node": f"job:{job.pk}", "from": "2026-12-01T00:00:00Z", "to": "2027-01-01T00:00:00Z"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    added = [edge for edge in body["edges"]["added"] if edge["kind"] == "parent"]
    assert len(added) == len(FIVE)
    assert not [edge for edge in body["edges"]["removed"] if edge["kind"] == "parent"]
    # From between the first task's START and its end: the task is active in the window and
    # its parent edge, which no run backs, is still not "removed".
    response = api.get(
        "/api/v1/lineage/diff",
        {"node": f"job:{job.pk}", "from": "2026-12-02T14:08:24.7Z", "to": "2027-01-01T00:00:00Z"},
    )
    before = _graph(api, "lc_five_tasks", as_of="2026-12-02T14:08:24.7Z")
    assert [edge for edge in before["edges"] if edge["kind"] == "parent"]
    body = response.json()
    assert not [edge for edge in body["edges"]["removed"] if edge["kind"] == "parent"]

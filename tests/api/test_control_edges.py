"""Control flow is not data flow (issue 41 item 4, ADR 0090): a run's jobDependencies facet
becomes control edges between jobs, in their own table; the graph draws them only with
``edges=data,control`` (400 for an unknown kind), the admin picture draws them dotted, and
no data read counts them."""

import copy
from typing import Any

import pytest
from django.test import Client

from catalog.models import ControlEdge, Job, JobLineageEdge, LineageEdge
from catalog.services.derive import derive_events
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event

pytestmark = pytest.mark.django_db

NS = "airflow://prod"
DATA = "postgres://db:5432"


def dependency(name: str, **rules: str) -> dict[str, Any]:
    """A JobDependency as the spec's schema gives it (its fields' own examples)."""
    return {"job": {"namespace": NS, "name": name}, **rules}


DEPENDENCIES = facet(
    upstream=[
        dependency(
            "etl.extract",
            dependency_type="DIRECT_INVOCATION",
            sequence_trigger_rule="FINISH_TO_START",
            status_trigger_rule="EXECUTE_ON_SUCCESS",
        )
    ],
    downstream=[dependency("etl.report", dependency_type="IMPLICIT_DEPENDENCY")],
    trigger_rule="ALL_SUCCESS",
)


def _events(seconds: float = 10, rules: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """extract writes raw; load (stating its dependencies) reads raw and writes mart."""
    extract = run_event(
        "COMPLETE",
        1,
        "00000000-0000-4000-8000-0000000000e1",
        (NS, "etl.extract"),
        outputs=[dataset(DATA, "raw")],
    )
    load = run_event(
        "COMPLETE",
        seconds,
        "00000000-0000-4000-8000-0000000000e2",
        (NS, "etl.load"),
        inputs=[dataset(DATA, "raw")],
        outputs=[dataset(DATA, "mart")],
        run_facets={"jobDependencies": rules or DEPENDENCIES},
    )
    return [extract, load]


def _job(name: str) -> int:
    return Job.objects.get(namespace=NS, name=name).id


def _graph(api: Client, node: str, **params: str) -> Any:
    query = "".join(f"&{key}={value}" for key, value in params.items())
    return api.get(f"/api/v1/lineage/graph?node={node}{query}")


def _kinds(body: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    kinds: dict[str, set[tuple[str, str]]] = {}
    for edge in body["edges"]:
        kinds.setdefault(edge["kind"], set()).add((edge["source"], edge["target"]))
    return kinds


def test_dependencies_are_control_edges_drawn_only_when_asked(api: Client) -> None:
    derive(*_events())
    extract, load, report = (f"job:{_job(n)}" for n in ("etl.extract", "etl.load", "etl.report"))
    plain = _graph(api, load)
    assert plain.status_code == 200
    assert "control" not in _kinds(plain.json())
    assert _graph(api, load, edges="data").json() == plain.json()
    body = _graph(api, load, edges="data,control").json()
    assert _kinds(body)["control"] == {(extract, load), (load, report)}
    assert report in {node["id"] for node in body["nodes"]}  # reached by control flow only
    [upstream] = [e for e in body["edges"] if e["kind"] == "control" and e["source"] == extract]
    assert upstream["control"] == {
        "dependency_type": "DIRECT_INVOCATION",
        "sequence_trigger_rule": "FINISH_TO_START",
        "status_trigger_rule": "EXECUTE_ON_SUCCESS",
        "trigger_rule": "ALL_SUCCESS",
    }
    assert upstream["id"] == f"{extract}->{load}#control"
    assert (upstream["run_count"], upstream["current"]) == (0, False)
    # The data edges are the same with and without control flow drawn.
    data = [e for e in body["edges"] if e["kind"] != "control"]
    assert data == plain.json()["edges"]


def test_an_unknown_edge_kind_is_a_400_problem(api: Client) -> None:
    derive(*_events())
    response = _graph(api, f"job:{_job('etl.load')}", edges="data,flow")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert "edges" in response.json()["detail"] or "edges" in str(response.json())


def test_control_edges_never_count_as_data_lineage(api: Client) -> None:
    derive(*_events())
    assert ControlEdge.objects.count() == 2
    # Only the data flow: raw → mart through load, and the two jobs' halves.
    assert LineageEdge.objects.count() == 1
    assert JobLineageEdge.objects.count() == 3
    raw_id = LineageEdge.objects.get().source_id
    impact = api.get(f"/api/v1/impact?node=dataset:{raw_id}&direction=downstream")
    assert impact.status_code == 200, impact.content
    named = str(impact.json())
    assert "etl.report" not in named  # reached only by control flow: no impact


def test_the_newest_statement_wins_in_any_order_and_twice(api: Client) -> None:
    older = _events(10)
    newer = _events(20, facet(upstream=[dependency("etl.extract", dependency_type="CHANGED")]))
    newer[1]["run"]["runId"] = "00000000-0000-4000-8000-0000000000e3"
    derive(*newer, *older, *copy.deepcopy(older))
    row = ControlEdge.objects.get(upstream_id=_job("etl.extract"))
    assert (row.dependency_type, row.trigger_rule) == ("CHANGED", "")
    assert str(row.last_run_uuid) != older[1]["run"]["runId"]
    assert (row.first_seen.second, row.last_seen.second) == (10, 20)


def test_a_badly_shaped_facet_warns_and_is_never_refused(ingest_client: Client) -> None:
    [_, load] = _events(rules=facet(upstream="etl.extract", trigger_rule=3))
    response = ingest_client.post("/api/v1/lineage", data=load, content_type="application/json")
    assert response.status_code == 201, response.content
    warnings = response.json()["warnings"]
    assert {w["facet"] for w in warnings} == {"/run/facets/jobDependencies"}
    derive_events([response.json()["id"]])
    assert Job.objects.filter(name="etl.load").exists()
    assert not ControlEdge.objects.exists()
    # Entries the schema allows but that name no usable job are skipped when derived.
    derive(*_events(rules=facet(upstream=[{"job": {"namespace": NS}}, {"run": {}}, 3])))
    assert not ControlEdge.objects.exists()


def test_the_admin_picture_draws_them_dotted(django_user_model: Any) -> None:
    derive(*_events())
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    page = client.get(f"/admin/catalog/job/{_job('etl.load')}/change/").content.decode()
    picture = page.split('<div class="lc-canvas">', 1)[1].split("</svg>", 1)[0]
    assert picture.count("lc-edge lc-edge-control") == 2
    assert 'id="legend-control"' in page and "stroke-dasharray: 1.5 3" in page

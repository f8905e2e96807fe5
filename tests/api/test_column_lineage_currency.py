"""Issue 26 parts 2 and 6: an input named only by column lineage is lineage (also as of a
time, since a time and in diffs), and every edge says whether the job's latest completed
run still produced it. Events go in through ingest and are derived, end to end."""

import uuid

import pytest
from django.test import Client

from api.marquez import paths
from catalog.models import Dataset
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.conftest import at, dataset, facet, run_event
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
JOB = ("etl", "build_report")
FIRST, SECOND = (str(uuid.UUID(int=n)) for n in (101, 102))


def lineage(**fields: tuple[str, str]) -> dict:
    return facet(
        fields={
            target: {"inputFields": [{"namespace": NS, "name": name, "field": field}]}
            for target, (name, field) in fields.items()
        }
    )


def post(client: Client, *events: dict) -> None:
    for document in events:
        response = client.post("/api/v1/lineage", document, content_type="application/json")
        assert response.status_code in (200, 201), response.content
    derive_events(
        list(Event.objects.filter(derivation_status="pending").values_list("id", flat=True))
    )


def two_runs(client: Client) -> None:
    """Run 1 lists ``orders`` and reads ``customers`` through column lineage only; run 2
    (later) no longer touches ``customers``."""
    first_out = dataset(
        NS, "report", columnLineage=lineage(total=("orders", "amount"), who=("customers", "name"))
    )
    second_out = dataset(NS, "report", columnLineage=lineage(total=("orders", "amount")))
    post(
        client,
        run_event("START", 0, FIRST, JOB, inputs=[dataset(NS, "orders")]),
        run_event("COMPLETE", 10, FIRST, JOB, inputs=[dataset(NS, "orders")], outputs=[first_out]),
    )
    post(
        client,
        run_event("START", 100, SECOND, JOB, inputs=[dataset(NS, "orders")]),
        run_event(
            "COMPLETE", 110, SECOND, JOB, inputs=[dataset(NS, "orders")], outputs=[second_out]
        ),
    )


def ref(name: str) -> str:
    return f"dataset:{Dataset.objects.for_alias(NS, name).get().id}"


def graph(api: Client, **params: str) -> dict:
    response = api.get("/api/v1/lineage/graph", {"node": ref("report"), **params})
    assert response.status_code == 200, response.content
    return response.json()


def inputs(body: dict) -> dict[str, dict]:
    return {edge["source"]: edge for edge in body["edges"] if edge["kind"] == "input"}


def test_an_input_named_only_by_column_lineage_is_an_input_edge(ingest_client, api) -> None:
    two_runs(ingest_client)
    body = graph(api, columns="true")
    edges = inputs(body)
    assert edges[ref("customers")]["via"] == "column_lineage"
    assert edges[ref("orders")]["via"] == ""
    assert edges[ref("customers")]["run_count"] == 1
    # The column edge from customers has both ends in the graph.
    assert {(e["source"], e["source_field"]) for e in body["column_edges"]} == {
        (ref("orders"), "amount"),
        (ref("customers"), "name"),
    }


def test_a_dependency_a_later_run_dropped_is_stale(ingest_client, api) -> None:
    two_runs(ingest_client)
    body = graph(api, columns="true")
    edges = inputs(body)
    assert edges[ref("orders")]["current"] is True
    assert edges[ref("customers")]["current"] is False
    assert all(edge["current"] for edge in body["edges"] if edge["kind"] == "output")
    current = {e["source_field"]: e["current"] for e in body["column_edges"]}
    assert current == {"amount": True, "name": False}
    # As of between the runs, the first run is the latest completed one: all current.
    before = graph(api, columns="true", as_of=at(50))
    assert all(edge["current"] for edge in before["edges"] + before["column_edges"])
    assert inputs(before)[ref("customers")]["via"] == "column_lineage"


def test_column_lineage_inputs_obey_since_and_diff(ingest_client, api) -> None:
    two_runs(ingest_client)
    assert ref("customers") not in inputs(graph(api, since=at(50)))
    assert ref("customers") in inputs(graph(api, since=at(5)))
    diff = api.get(
        "/api/v1/lineage/diff", {"node": ref("report"), "from": at(50), "to": at(200)}
    ).json()
    assert [edge["source"] for edge in diff["edges"]["removed"]] == [ref("customers")]
    added = api.get(
        "/api/v1/lineage/diff", {"node": ref("report"), "from": at(-10), "to": at(20)}
    ).json()
    assert ref("customers") in {edge["source"] for edge in added["edges"]["added"]}


def test_a_later_listing_of_the_same_input_wins_in_any_order(ingest_client, api) -> None:
    """One run: an event names ``customers`` only in column lineage, a later one lists it
    (and the other way round): the input is listed either way."""
    out = dataset(NS, "report", columnLineage=lineage(who=("customers", "name")))
    listed = run_event("COMPLETE", 10, FIRST, JOB, inputs=[dataset(NS, "customers")])
    named = run_event("START", 0, FIRST, JOB, outputs=[out])
    post(ingest_client, listed)
    post(ingest_client, named)
    assert inputs(graph(api))[ref("customers")]["via"] == ""


def test_marquez_draws_every_input_and_output_of_the_jobs_it_draws(ingest_client, api) -> None:
    """A check reads ``report`` and ``limits``; ``limits`` leads nowhere, so the walk from
    ``report`` never reaches it, but Marquez draws each job with all of its inputs."""
    two_runs(ingest_client)
    check = str(uuid.UUID(int=103))
    post(
        ingest_client,
        run_event(
            "COMPLETE",
            200,
            check,
            ("etl", "check_report"),
            inputs=[dataset(NS, "report"), dataset(NS, "limits")],
        ),
    )
    native = {n["name"] for n in graph(api, depth="1", direction="downstream")["nodes"]}
    assert "check_report" in native and "limits" not in native
    response = MarquezClient(api).get(
        "/lineage", nodeId=paths.node_id("dataset", NS, "report"), depth="1"
    )
    nodes = {node["id"]: node for node in response.json()["graph"]}
    limits = paths.node_id("dataset", NS, "limits")
    check_job = paths.node_id("job", "etl", "check_report")
    assert limits in nodes
    assert {"origin": limits, "destination": check_job} in nodes[check_job]["inEdges"]


def test_dataset_dependencies_fold_over_runs_like_column_edges(ingest_client, api) -> None:
    """Two runs with the same dataset-level dependency: one row, two runs, the span of
    both, the later run last; a redelivered event changes nothing."""
    dependency = facet(
        fields={},
        dataset=[
            {
                "namespace": NS,
                "name": "orders",
                "field": "status",
                "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
            }
        ],
    )
    out = dataset(NS, "report", columnLineage=dependency)
    first = run_event("COMPLETE", 0, FIRST, JOB, outputs=[out])
    post(ingest_client, first)
    post(ingest_client, run_event("COMPLETE", 100, SECOND, JOB, outputs=[out]))
    post(ingest_client, {**first, "producer": "https://example.com/again"})
    body = graph(api, columns="true")
    assert body["column_edges"] == []
    [only] = body["dataset_dependencies"]
    assert (only["source"], only["source_field"], only["transformation_subtype"]) == (
        ref("orders"),
        "status",
        "FILTER",
    )
    assert (only["run_count"], only["first_seen"], only["last_seen"]) == (2, at(0), at(100))
    assert only["last_run_id"] == SECOND and only["current"] is True
    # orders is an input of the job through the dependency alone.
    assert inputs(body)[ref("orders")]["via"] == "column_lineage"

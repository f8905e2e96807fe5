"""A COMPLETE_SNAPSHOT run's column lineage is its newest window's, like its dataset and
job edges (issue 41 item 1 of the last step, ADR 0091 amended): Flink-shaped events
(tests/api/project_fixtures.flink_snapshots) whose first windows map ``input1``'s fields
and whose newest maps ``input2``'s. Whatever the arrival order, a late older window
changes nothing; the graph, its currency and the Marquez mount's column lineage agree."""

from typing import Any

import pytest
from django.test import Client

from catalog.models import ColumnLineageEdge, Job, Run
from tests.api.project_fixtures import FLINK_TOPIC, derive, fixture, flink_snapshots
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

JOB = ("flink_job_namespace", "flink_examples_stateful")
OUTPUT = "io.openlineage.flink.kafka.output"
NEWEST = {
    ("io.openlineage.flink.kafka.input2", "id", "id"),
    ("io.openlineage.flink.kafka.input2", "version", "version"),
}


def _graph(api: Client) -> dict[str, Any]:
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    response = api.get(f"/api/v1/lineage/graph?node=job:{job.id}&depth=1&columns=true")
    assert response.status_code == 200, response.content
    return response.json()


def _column_edges(api: Client) -> dict[tuple[str, str, str], dict[str, Any]]:
    body = _graph(api)
    names = {node["id"]: node.get("name") for node in body["nodes"]}
    return {
        (names[edge["source"]], edge["source_field"], edge["target_field"]): edge
        for edge in body["column_edges"]
    }


def _stored() -> set[tuple[str, str, str, int]]:
    """Every stored column edge: (source, source field, target field, runs)."""
    return {
        (edge.source.name, edge.source_field, edge.target_field, edge.run_count)
        for edge in ColumnLineageEdge.objects.select_related("source")
    }


def test_the_newest_window_is_the_runs_column_lineage(api: Client) -> None:
    derive(*flink_snapshots())
    [run] = Run.objects.filter(job__name=JOB[1])
    assert (run.is_streaming, run.emits_snapshots, run.state) == (True, True, "RUNNING")
    edges = _column_edges(api)
    # input1's fields were the first windows' only: the newest snapshot no longer maps them.
    assert set(edges) == NEWEST
    for edge in edges.values():
        assert (edge["current"], edge["run_count"]) == (True, 1)
        assert edge["last_run_id"] == str(run.run_uuid)
    assert {name for name, *_ in _stored()} == {"io.openlineage.flink.kafka.input2"}


@pytest.mark.parametrize(
    "order",
    [(2, 1, 0), (2, 0, 1), (0, 2, 1), (1, 2, 0)],
    ids=["reversed", "newest-first", "late-checkpoint", "late-start"],
)
def test_a_late_older_window_changes_nothing(api: Client, order: tuple[int, ...]) -> None:
    """Each event in its own batch: the newest window derived before an older one."""
    events = flink_snapshots()
    derive(*(events[index] for index in order))
    assert set(_column_edges(api)) == NEWEST
    assert _stored() == {(name, source, target, 1) for name, source, target in NEWEST}


def test_a_newest_window_without_column_lineage_has_none(api: Client) -> None:
    """A snapshot is the window's complete state: one that maps no field keeps none of the
    older windows' mappings (the run's dataset edges are still the newest window's)."""
    *older, newest = flink_snapshots()
    del newest["outputs"][0]["facets"]["columnLineage"]
    derive(*older, newest)
    assert _column_edges(api) == {}
    assert _stored() == set()


def test_an_accumulating_deployment_keeps_its_column_lineage_beside_the_snapshots(
    api: Client,
) -> None:
    """The older deployment accumulated (the Flink fixtures as sent, with column lineage
    from input1): its edges stay, as history, not current; the snapshot run's recompute
    rebuilds the job's edges from both runs' facts and drops none of the older run's."""
    older = []
    for name in ("flink_streaming_start", "flink_streaming_checkpoint_1"):
        event = fixture(name)
        event["outputs"][0]["facets"]["columnLineage"] = flink_snapshots()[0]["outputs"][0][
            "facets"
        ]["columnLineage"]
        older.append(event)
    derive(*older, *flink_snapshots())
    edges = _column_edges(api)
    current = {key: edge["current"] for key, edge in edges.items()}
    assert current == {
        **{key: True for key in NEWEST},
        ("io.openlineage.flink.kafka.input1", "id", "id"): False,
        ("io.openlineage.flink.kafka.input1", "version", "version"): False,
    }
    # input1's edges count the older run only: the snapshot run's first windows are gone.
    assert {key[0]: edge["run_count"] for key, edge in edges.items()} == {
        "io.openlineage.flink.kafka.input1": 1,
        "io.openlineage.flink.kafka.input2": 1,
    }


def test_marquez_column_lineage_is_the_newest_window(
    read_client: Client, steady_token_cache: None
) -> None:
    derive(*reversed(flink_snapshots()))
    node = f"datasetField:{FLINK_TOPIC}:{OUTPUT}:id"
    response = MarquezClient(read_client).get("/column-lineage", nodeId=node, depth="1")
    assert response.status_code == 200, response.content
    graph = {item["id"]: item for item in response.json()["graph"]}
    sources = {
        (source["dataset"], source["field"]) for source in graph[node]["data"]["inputFields"]
    }
    assert sources == {("io.openlineage.flink.kafka.input2", "id")}


def test_a_snapshot_pattern_on_a_later_event_recomputes_the_column_edges(api: Client) -> None:
    """The first windows said nothing of their pattern (folded as accumulating); the
    newest says snapshots: its batch recomputes the run's column edges."""
    *older, newest = flink_snapshots()
    for event in older:
        del event["job"]["facets"]["jobType"]["emissionPattern"]
    derive(*older)
    assert {key[0] for key in _column_edges(api)} == {"io.openlineage.flink.kafka.input1"}
    derive(newest)
    assert set(_column_edges(api)) == NEWEST

"""The lineage graph's answers, byte for byte, on a fixed store (issue 42).

The graph's reads were rewritten for speed (fewer statements, server-side parameters,
less Python per node; ADR 0099): the answers must not change. tests/fixtures/
graph_snapshot.json holds, for each request below, the status and the body's SHA-256 and
length that the code before that rewrite gave on ``graph_snapshot_store``'s store (fixed
ids and times, so the same bytes on every run). A change that alters an answer on purpose
regenerates it: ``GRAPH_SNAPSHOT_WRITE=1 .venv/bin/pytest tests/api/test_graph_snapshot.py``
(and says why in its commit).
"""

from pathlib import Path
from urllib.parse import quote

import pytest

from tests.api import graph_snapshot_store
from tests.api.snapshots import assert_answers_unchanged

pytestmark = pytest.mark.django_db

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "graph_snapshot.json"
GRAPH = "/api/v1/lineage/graph?node="
BOUNDS = "direction=both&depth=5&max_nodes=500"
REQUESTS = [
    f"{GRAPH}dataset:1",
    f"{GRAPH}dataset:1&{BOUNDS}",
    f"{GRAPH}dataset:33&{BOUNDS}",
    f"{GRAPH}dataset:10&{BOUNDS}&lineage=static",
    f"{GRAPH}dataset:10&{BOUNDS}&lineage=observed",
    f"{GRAPH}dataset:2&{BOUNDS}&edges=data,control",
    f"{GRAPH}dataset:3&{BOUNDS}&columns=true",
    f"{GRAPH}dataset:4&max_nodes=15",
    f"{GRAPH}dataset:4&max_nodes=1",
    f"{GRAPH}dataset:5&depth=1",
    f"{GRAPH}dataset:5&depth=2&direction=upstream",
    f"{GRAPH}dataset:6&depth=2&direction=downstream",
    f"{GRAPH}dataset:7&{BOUNDS}&as_of=2026-10-31T20:00:00Z",
    f"{GRAPH}dataset:8&{BOUNDS}&as_of=2026-10-30T00:00:00Z",
    f"{GRAPH}dataset:9&{BOUNDS}&since=2026-11-01T01:00:00Z",
    f"{GRAPH}dataset:40",  # retired: 404
    f"{GRAPH}dataset:41&{BOUNDS}",  # its retirement was restored
    f"{GRAPH}dataset:45&{BOUNDS}",  # a temporary job output
    f"{GRAPH}dataset:46&depth=3&max_nodes=40",
    f"{GRAPH}job:1&{BOUNDS}",  # a DAG: its tasks are drawn
    f"{GRAPH}job:5",
    f"{GRAPH}job:7&{BOUNDS}",  # a job whose runs had pairs cut
    f"{GRAPH}job:12",  # retired: 404
    f"{GRAPH}job:29&{BOUNDS}",  # declared lineage
    f"{GRAPH}job:20&depth=2",  # a check (reads only)
    f"{GRAPH}job:21&depth=2&max_nodes=4",
    f"{GRAPH}job:9&{BOUNDS}&as_of=2026-10-31T12:00:00Z",
    "/api/v1/lineage/diff?node=dataset:1&from=2026-10-30T00:00:00Z&to=2026-11-01T02:00:00Z",
    "/marquez/api/v1/lineage?depth=5&nodeId="
    + quote("dataset:postgres://db1:5432:schema_1.table_1"),
    "/marquez/api/v1/lineage?depth=2&nodeId=" + quote("job:airflow:dag_0.task_5"),
]


def test_the_graph_answers_are_unchanged(api):
    graph_snapshot_store.build()
    bodies = {path: api.get(path) for path in REQUESTS}
    assert_answers_unchanged(bodies, ANSWERS, "GRAPH_SNAPSHOT_WRITE")
    # Not vacuous: the store draws big graphs, cuts, declarations, both kinds of root and
    # the Marquez mount's graph.
    assert len(bodies[REQUESTS[1]].json()["nodes"]) > 80
    assert bodies[REQUESTS[7]].json()["cut"]["max_nodes"]
    assert any(edge["static"] for edge in bodies[REQUESTS[23]].json()["edges"])
    assert bodies[REQUESTS[15]].status_code == 404
    assert all(bodies[path].status_code == 200 for path in REQUESTS[-2:])

"""Marquez's ``/column-lineage`` folds temporary datasets as the graph does (issue 41 item
2, ADR 0089): ``x`` of the first job's input reaches ``y`` of the second job's output with
no field of the JOB_OUTPUT/TEMPORARY dataset between them, whether the dataset was typed
by the runs that used it (observed) or only by a job's JobEvent (declared)."""

from typing import Any

import pytest
from django.test import Client

from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

NS = "s3://lake"
TEMPORARY = facet(datasetType="JOB_OUTPUT", subType="TEMPORARY")
RUNS = [f"00000000-0000-4000-8000-0000000000{n:02d}" for n in range(10)]


@pytest.fixture
def mz(read_client: Client, steady_token_cache: None) -> MarquezClient:
    return MarquezClient(read_client)


def _columns(mapping: dict[str, tuple[str, str]], kind: str = "DIRECT") -> dict[str, Any]:
    """columnLineage: target field → (source dataset name, source field)."""
    return facet(
        fields={
            target: {
                "inputFields": [
                    {
                        "namespace": NS,
                        "name": source,
                        "field": field,
                        "transformations": [{"type": kind, "description": f"{source}.{field}"}],
                    }
                ]
            }
            for target, (source, field) in mapping.items()
        }
    )


def _run(job: str, n: int, inputs: list, outputs: list) -> dict[str, Any]:
    return run_event("COMPLETE", n, RUNS[n], ("etl", job), inputs, outputs)


def _field_graph(mz: MarquezClient, node: str, **params: Any) -> dict[str, dict[str, Any]]:
    response = mz.get("/column-lineage", nodeId=node, **params)
    assert response.status_code == 200, response.content
    return {item["id"]: item for item in response.json()["graph"]}


def _inputs(graph: dict[str, dict[str, Any]], node: str) -> list[tuple[str, str, str | None]]:
    return [
        (item["dataset"], item["field"], item["transformationType"])
        for item in graph[node]["data"]["inputFields"]
    ]


def _observed_chain(temp: dict[str, Any] | None = None) -> None:
    """raw.x → [stage1] → shuffle.c (temporary) → [stage2] → mart.y."""
    shuffle = dataset(NS, "shuffle", **(temp if temp is not None else {"datasetType": TEMPORARY}))
    derive(
        _run(
            "stage1",
            1,
            [dataset(NS, "raw")],
            [
                {
                    **shuffle,
                    "facets": {**shuffle["facets"], "columnLineage": _columns({"c": ("raw", "x")})},
                }
            ],
        ),
        _run(
            "stage2",
            2,
            [shuffle],
            [dataset(NS, "mart", columnLineage=_columns({"y": ("shuffle", "c")}, "INDIRECT"))],
        ),
    )


def test_observed_temporary_is_passed_through_upstream_and_downstream(mz: MarquezClient) -> None:
    _observed_chain()
    up = _field_graph(mz, f"datasetField:{NS}:mart:y")
    assert set(up) == {f"datasetField:{NS}:mart:y", f"datasetField:{NS}:raw:x"}
    # The composed input: INDIRECT as one of its parts is, named by the first job's source.
    assert _inputs(up, f"datasetField:{NS}:mart:y") == [("raw", "x", "INDIRECT")]
    data = up[f"datasetField:{NS}:mart:y"]["data"]
    assert data["inputFields"][0]["transformationDescription"] == "raw.x; shuffle.c"
    assert up[f"datasetField:{NS}:mart:y"]["inEdges"] == [
        {"origin": f"datasetField:{NS}:mart:y", "destination": f"datasetField:{NS}:raw:x"}
    ]
    down = _field_graph(mz, f"datasetField:{NS}:raw:x", withDownstream="true")
    assert set(down) == {f"datasetField:{NS}:mart:y", f"datasetField:{NS}:raw:x"}
    assert down[f"datasetField:{NS}:raw:x"]["outEdges"] == [
        {"origin": f"datasetField:{NS}:raw:x", "destination": f"datasetField:{NS}:mart:y"}
    ]
    # From a job: the fields the second job wrote, and where they came from.
    by_job = _field_graph(mz, "job:etl:stage2")
    assert f"datasetField:{NS}:shuffle:c" not in by_job
    assert _inputs(by_job, f"datasetField:{NS}:mart:y") == [("raw", "x", "INDIRECT")]


def test_declared_temporary_is_passed_through(mz: MarquezClient) -> None:
    """The runs never typed the dataset; a JobEvent of the job that writes it did."""
    _observed_chain(temp={})
    plain = _field_graph(mz, f"datasetField:{NS}:mart:y")
    assert f"datasetField:{NS}:shuffle:c" in plain  # not typed yet: a node like any other
    derive(
        {
            "eventTime": "2026-03-01T10:00:00Z",
            "producer": "https://example.com/test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
            "job": {"namespace": "etl", "name": "stage1", "facets": {}},
            "inputs": [dataset(NS, "raw")],
            "outputs": [dataset(NS, "shuffle", datasetType=TEMPORARY)],
        }
    )
    folded = _field_graph(mz, f"datasetField:{NS}:mart:y")
    assert set(folded) == {f"datasetField:{NS}:mart:y", f"datasetField:{NS}:raw:x"}
    assert _inputs(folded, f"datasetField:{NS}:mart:y") == [("raw", "x", "INDIRECT")]


def test_a_chain_of_temporaries_and_what_is_not_folded(mz: MarquezClient) -> None:
    def temp(name: str, **facets: Any) -> dict[str, Any]:
        return dataset(NS, name, datasetType=TEMPORARY, **facets)

    derive(
        _run(
            "a", 1, [dataset(NS, "raw")], [temp("t1", columnLineage=_columns({"c": ("raw", "x")}))]
        ),
        _run("b", 2, [temp("t1")], [temp("t2", columnLineage=_columns({"d": ("t1", "c")}))]),
        _run(
            "c", 3, [temp("t2")], [dataset(NS, "mart", columnLineage=_columns({"y": ("t2", "d")}))]
        ),
        # A temporary column nobody reads: a dead end stays a node.
        _run(
            "e",
            4,
            [dataset(NS, "raw")],
            [temp("scratch", columnLineage=_columns({"s": ("raw", "x")}))],
        ),
    )
    up = _field_graph(mz, f"datasetField:{NS}:mart:y")
    assert set(up) == {f"datasetField:{NS}:mart:y", f"datasetField:{NS}:raw:x"}
    assert _inputs(up, f"datasetField:{NS}:mart:y") == [("raw", "x", "DIRECT")]
    down = _field_graph(mz, f"datasetField:{NS}:raw:x", withDownstream="true")
    assert set(down) == {
        f"datasetField:{NS}:raw:x",
        f"datasetField:{NS}:mart:y",
        f"datasetField:{NS}:scratch:s",
    }
    # The root's own dataset is shown, temporary or not.
    rooted = _field_graph(mz, f"datasetField:{NS}:t1:c", withDownstream="true")
    assert f"datasetField:{NS}:t1:c" in rooted
    assert f"datasetField:{NS}:t2:d" not in rooted  # folded: t1.c reaches mart.y directly
    assert _inputs(rooted, f"datasetField:{NS}:mart:y") == [("t1", "c", "DIRECT")]
    # A depth bound's edge: the walk did not reach t2's writer, so t2 stays and says so.
    response = mz.get("/column-lineage", nodeId=f"datasetField:{NS}:mart:y", depth=1)
    body = response.json()
    assert body["truncated"] is True
    assert {item["id"] for item in body["graph"]} == {
        f"datasetField:{NS}:mart:y",
        f"datasetField:{NS}:t2:d",
    }

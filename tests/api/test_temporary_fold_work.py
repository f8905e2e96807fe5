"""Folding a temporary dataset composes each edge into it with each edge out of it
(catalog.lineage.temporary._chain, ADR 0089), at most ``limit`` composed edges: the limit
counted new edges only, so edges into a field that differ only in what a composed edge does
not keep (their job, their transformation) were each composed with every edge out of it.
1,000 times 1,000 such edges were a million compositions, 16 s of one web process's CPU, for
1,000 edges drawn (ADR 0172). Composed now: one first edge per identity it can give, one
second edge per identity it can give, the same answer."""

from typing import Any

import pytest
from django.test import Client

from catalog.lineage import temporary
from catalog.models import Dataset
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event
from tests.marquez.conftest import MarquezClient

NS = "s3://lake"
SIDE = 30  # edges into the temporary field, and edges out of it


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls = [0]
    compose = getattr(temporary, name)

    def counting(first: Any, second: Any) -> Any:
        calls[0] += 1
        return compose(first, second)

    monkeypatch.setattr(temporary, name, counting)
    return calls


def _lineage(fields: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return facet(fields={target: {"inputFields": inputs} for target, inputs in fields.items()})


TEMPORARY = facet(datasetType="JOB_OUTPUT", subType="TEMPORARY")


def _run(job: str, n: int, inputs: list, outputs: list) -> dict[str, Any]:
    return run_event(
        "COMPLETE", n, f"00000000-0000-4000-8000-{n:012d}", ("etl", job), inputs, outputs
    )


def _input(name: str, field: str, description: str = "") -> dict[str, Any]:
    return {
        "namespace": NS,
        "name": name,
        "field": field,
        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "description": description}],
    }


@pytest.mark.django_db
def test_the_graphs_fold_composes_each_identity_once(
    api: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """raw.x → shuffle.c in SIDE transformations that differ only in their description, and
    out of shuffle.c into SIDE fields of mart, and into mart.z in SIDE descriptions: the
    graph keeps neither part's description in a composed edge's identity, so SIDE + 1
    composed edges, each composed once (SIDE * 2 * SIDE before)."""
    derive(
        _run(
            "stage1",
            1,
            [dataset(NS, "raw")],
            [
                dataset(
                    NS,
                    "shuffle",
                    datasetType=TEMPORARY,
                    columnLineage=_lineage(
                        {"c": [_input("raw", "x", f"in {n}") for n in range(SIDE)]}
                    ),
                )
            ],
        ),
        _run(
            "stage2",
            2,
            [dataset(NS, "shuffle")],
            [
                dataset(
                    NS,
                    "mart",
                    columnLineage=_lineage(
                        {
                            **{f"y{n}": [_input("shuffle", "c")] for n in range(SIDE)},
                            "z": [_input("shuffle", "c", f"out {n}") for n in range(SIDE)],
                        }
                    ),
                )
            ],
        ),
    )
    calls = _counted(monkeypatch, "_compose")
    mart = Dataset.objects.for_alias(NS, "mart").get().id
    response = api.get(f"/api/v1/lineage/graph?node=dataset:{mart}&direction=upstream&columns=true")
    assert response.status_code == 200, response.content
    body = response.json()
    composed = sorted(edge["target_field"] for edge in body["column_edges"] if edge["through"])
    assert composed == sorted([*(f"y{n}" for n in range(SIDE)), "z"])
    assert not body["truncated"]
    assert calls[0] == SIDE + 1


@pytest.mark.django_db
def test_the_field_walks_fold_composes_each_identity_once(
    read_client: Client, steady_token_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """raw.x → shuffle.c by SIDE jobs (a composed edge keeps the second edge's job), then
    into SIDE fields of mart: Marquez's /column-lineage from raw.x downstream composes SIDE
    edges once each (SIDE * SIDE before)."""
    derive(
        *(
            _run(
                f"stage1_{n}",
                n,
                [dataset(NS, "raw")],
                [
                    dataset(
                        NS,
                        "shuffle",
                        datasetType=TEMPORARY,
                        columnLineage=_lineage({"c": [_input("raw", "x")]}),
                    )
                ],
            )
            for n in range(1, SIDE + 1)
        ),
        _run(
            "stage2",
            SIDE + 1,
            [dataset(NS, "shuffle")],
            [
                dataset(
                    NS,
                    "mart",
                    columnLineage=_lineage(
                        {f"y{n}": [_input("shuffle", "c")] for n in range(SIDE)}
                    ),
                )
            ],
        ),
    )
    calls = _counted(monkeypatch, "_compose_column")
    response = MarquezClient(read_client).get(
        "/column-lineage", nodeId=f"datasetField:{NS}:raw:x", withDownstream="true"
    )
    assert response.status_code == 200, response.content
    fields = {item["id"] for item in response.json()["graph"]}
    assert {f"datasetField:{NS}:mart:y{n}" for n in range(SIDE)} <= fields
    assert not any(":shuffle:" in field for field in fields)
    assert calls[0] == SIDE

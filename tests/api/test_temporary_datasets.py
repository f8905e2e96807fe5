"""Temporary datasets fold away (issue 41 item 2, ADR 0089): a dataset typed JOB_OUTPUT /
TEMPORARY between two jobs is drawn as a job-to-job ``through`` link, in /api/v1's graph,
the admin picture and Marquez /lineage; column lineage passes through it; it stays readable
by id; declared (JobEvent) and observed forms both fold; chains of them fold too."""

import json
from typing import Any

import pytest
from django.test import Client

from catalog.models import Dataset, Job
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.facets.spec_examples import EXAMPLES
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

NS = "s3://lake"
TEMPORARY = facet(datasetType="JOB_OUTPUT", subType="TEMPORARY")


@pytest.fixture
def mz(read_client: Client, steady_token_cache: None) -> MarquezClient:
    return MarquezClient(read_client)


def _columns(mapping: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """columnLineage: target field → (source dataset name, source field)."""
    return facet(
        fields={
            target: {
                "inputFields": [
                    {
                        "namespace": NS,
                        "name": source,
                        "field": field,
                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                    }
                ]
            }
            for target, (source, field) in mapping.items()
        }
    )


def _temp(name: str, **facets: Any) -> dict[str, Any]:
    return dataset(NS, name, datasetType=TEMPORARY, **facets)


def _run(job: str, run: str, seconds: float, inputs: list, outputs: list) -> dict[str, Any]:
    return run_event("COMPLETE", seconds, run, ("etl", job), inputs, outputs)


def _chain() -> None:
    """raw → [stage1] → shuffle (temporary) → [stage2] → mart, with column lineage through."""
    derive(
        _run(
            "stage1",
            "00000000-0000-4000-8000-000000000001",
            1,
            [dataset(NS, "raw")],
            [_temp("shuffle", columnLineage=_columns({"c": ("raw", "x")}))],
        ),
        _run(
            "stage2",
            "00000000-0000-4000-8000-000000000002",
            2,
            [_temp("shuffle")],
            [dataset(NS, "mart", columnLineage=_columns({"y": ("shuffle", "c")}))],
        ),
    )


def _id(name: str) -> int:
    return Dataset.objects.for_alias(NS, name).get().id


def _job(name: str) -> int:
    return Job.objects.get(namespace="etl", name=name).id


def _graph(api: Client, node: str, **params: str) -> dict[str, Any]:
    query = "".join(f"&{key}={value}" for key, value in params.items())
    response = api.get(f"/api/v1/lineage/graph?node={node}{query}")
    assert response.status_code == 200, response.content
    return response.json()


def _edges(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(edge["kind"], edge["source"], edge["target"]) for edge in body["edges"]}


def test_a_temporary_dataset_is_a_job_to_job_link_with_columns_through_it(api: Client) -> None:
    _chain()
    raw, shuffle, mart = _id("raw"), _id("shuffle"), _id("mart")
    stage1, stage2 = f"job:{_job('stage1')}", f"job:{_job('stage2')}"
    body = _graph(api, f"dataset:{mart}", direction="upstream", columns="true")
    assert f"dataset:{shuffle}" not in {node["id"] for node in body["nodes"]}
    assert _edges(body) == {
        ("input", f"dataset:{raw}", stage1),
        ("through", stage1, stage2),
        ("output", stage2, f"dataset:{mart}"),
    }
    [link] = [edge for edge in body["edges"] if edge["kind"] == "through"]
    assert link["through"] == [f"dataset:{shuffle}"]
    assert (link["run_count"], link["current"], link["observed"]) == (1, True, True)
    # x of the first job's input reaches y of the second job's output, through the temp.
    assert [
        (e["source"], e["source_field"], e["target"], e["target_field"], e["job"], e["through"])
        for e in body["column_edges"]
    ] == [(f"dataset:{raw}", "x", f"dataset:{mart}", "y", stage2, [f"dataset:{shuffle}"])]


def test_it_stays_readable_by_id_and_as_a_root(api: Client) -> None:
    _chain()
    shuffle = _id("shuffle")
    detail = api.get(f"/api/v1/datasets/{shuffle}")
    assert detail.status_code == 200 and detail.json()["name"] == "shuffle"
    body = _graph(api, f"dataset:{shuffle}")
    assert f"dataset:{shuffle}" in {node["id"] for node in body["nodes"]}
    assert "through" not in {edge["kind"] for edge in body["edges"]}


def test_a_temporary_dataset_nobody_reads_stays_a_node(api: Client) -> None:
    derive(_run("stage1", "00000000-0000-4000-8000-000000000001", 1, [], [_temp("scratch")]))
    body = _graph(api, f"job:{_job('stage1')}")
    assert f"dataset:{_id('scratch')}" in {node["id"] for node in body["nodes"]}


def test_a_chain_of_temporaries_folds_into_links_between_jobs(api: Client) -> None:
    runs = [f"00000000-0000-4000-8000-00000000001{n}" for n in range(4)]
    derive(
        _run("a", runs[0], 1, [dataset(NS, "raw")], [_temp("t1")]),
        _run("b", runs[1], 2, [_temp("t1")], [_temp("t2")]),
        _run("c", runs[2], 3, [_temp("t2")], [_temp("t3")]),
        _run("d", runs[3], 4, [_temp("t3")], [dataset(NS, "mart")]),
    )
    body = _graph(api, f"dataset:{_id('mart')}", direction="upstream", depth="10")
    a, b, c, d = (f"job:{_job(name)}" for name in "abcd")
    assert _edges(body) == {
        ("input", f"dataset:{_id('raw')}", a),
        ("through", a, b),
        ("through", b, c),
        ("through", c, d),
        ("output", d, f"dataset:{_id('mart')}"),
    }
    # The walk is bounded as before: a temporary dataset is a hop, so depth cuts the chain.
    short = _graph(api, f"dataset:{_id('mart')}", direction="upstream", depth="2")
    assert short["truncated"] and ("through", c, d) in _edges(short)
    assert a not in {node["id"] for node in short["nodes"]}


def test_declared_temporaries_fold_too(api: Client) -> None:
    def job_event(job: str, inputs: list, outputs: list) -> dict[str, Any]:
        return {
            "eventTime": "2026-03-01T10:00:00Z",
            "producer": "https://example.com/test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
            "job": {"namespace": "etl", "name": job, "facets": {}},
            "inputs": inputs,
            "outputs": outputs,
        }

    derive(
        job_event("plan1", [dataset(NS, "raw")], [_temp("staged")]),
        job_event("plan2", [_temp("staged")], [dataset(NS, "mart")]),
    )
    body = _graph(api, f"dataset:{_id('mart')}", direction="upstream", lineage="static")
    plan1, plan2 = f"job:{_job('plan1')}", f"job:{_job('plan2')}"
    assert ("through", plan1, plan2) in _edges(body)
    [link] = [edge for edge in body["edges"] if edge["kind"] == "through"]
    assert (link["observed"], link["static"], link["run_count"]) == (False, True, 0)
    assert f"dataset:{_id('staged')}" not in {node["id"] for node in body["nodes"]}


def test_other_dataset_types_are_nodes_as_before(api: Client) -> None:
    """The spec's own example (a materialized VIEW) is not temporary."""
    example = json.loads((EXAMPLES / "DatasetTypeDatasetFacet" / "1.json").read_text())
    derive(
        _run("s1", "00000000-0000-4000-8000-000000000001", 1, [], [dataset(NS, "v", **example)]),
        _run("s2", "00000000-0000-4000-8000-000000000002", 2, [dataset(NS, "v")], []),
    )
    body = _graph(api, f"job:{_job('s1')}", direction="downstream")
    assert f"dataset:{_id('v')}" in {node["id"] for node in body["nodes"]}
    assert "through" not in {edge["kind"] for edge in body["edges"]}


def test_marquez_lineage_links_the_jobs_directly(mz: MarquezClient) -> None:
    _chain()
    response = mz.get("/lineage", nodeId="job:etl:stage1", depth=3)
    assert response.status_code == 200, response.content
    body = response.json()
    ids = {node["id"] for node in body["graph"]}
    assert f"dataset:{NS}:shuffle" not in ids
    [stage1] = [node for node in body["graph"] if node["id"] == "job:etl:stage1"]
    assert {"origin": "job:etl:stage1", "destination": "job:etl:stage2"} in stage1["outEdges"]


def test_the_admin_picture_draws_the_link_not_the_dataset(django_user_model: Any) -> None:
    _chain()
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", "", "pw"))
    page = client.get(f"/admin/catalog/job/{_job('stage1')}/change/").content.decode()
    picture = page.split('<div class="lc-canvas">', 1)[1].split("</svg>", 1)[0]
    assert picture.count("lc-edge lc-edge-through") == 1
    # No node for it (the job's own table of edges below the picture still lists it).
    assert f"/admin/catalog/dataset/{_id('shuffle')}/change/" not in picture
    assert f"/admin/catalog/dataset/{_id('raw')}/change/" in picture
    assert 'id="legend-through"' in page

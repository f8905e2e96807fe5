"""The experimental ``lineage`` facet's per-target pairs (issue 41 item 7, ADR 0102), end to
end on real PostgreSQL: a job reading A and B and writing C and D whose facet says A → C and
B → D has those two dataset edges, not the four of its inputs x outputs; its job edges (what
the bipartite graph draws, the Marquez mount) are unchanged. The same in every arrival
order, through retention, a rederive and a namespace purge; off, today's product."""

import uuid
from typing import Any

import pytest
from django.test import Client

from catalog.models import Job, LineageEdge, Run, RunDatasetPair, StaticDatasetPair
from catalog.services.derive import derive_events, rederive
from catalog.services.purge import purge_namespace
from catalog.services.retention import apply_retention
from tests.api.project_fixtures import derive
from tests.catalog.facets.lineage_facet_world import (
    JOB,
    RUN,
    WAREHOUSE,
    dataset_id,
    job_event,
    run_event,
)
from tests.catalog.facets.world import ok
from tests.catalog.helpers import canonical_dump, openlineage, store
from tests.catalog.test_order_independence import _derive, _reset
from tests.catalog.test_retention import _age, _lineage
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

A, B, C, D = ((WAREHOUSE, f"public.{name}") for name in "abcd")
TWO = {  # the proposal's opening case: two targets, each from its own source
    "entries": [
        {
            "type": "DATASET",
            "namespace": WAREHOUSE,
            "name": target[1],
            "inputs": [{"type": "DATASET", "namespace": WAREHOUSE, "name": source[1]}],
        }
        for source, target in ((A, C), (B, D))
    ]
}
PAIRS = {("public.a", "public.c"), ("public.b", "public.d")}
PRODUCT = {(s, t) for s in ("public.a", "public.b") for t in ("public.c", "public.d")}


@pytest.fixture
def on(settings):
    settings.LINEAGE = {**settings.LINEAGE, "EXPERIMENTAL_LINEAGE_FACET": True}


def _edges() -> set[tuple[str, str]]:
    """The catalog's dataset → dataset edges by name."""
    return {
        (edge.source.name, edge.target.name)
        for edge in LineageEdge.objects.select_related("source", "target")
    }


def _downstream(api: Client, root: tuple[str, str], lineage: str = "all") -> set[str]:
    graph = ok(
        api.get(
            f"/api/v1/lineage/graph?node=dataset:{dataset_id(root)}&depth=5"
            f"&direction=downstream&lineage={lineage}"
        )
    )
    return {node["name"] for node in graph["nodes"] if node["id"].startswith("dataset:")}


def _impact(api: Client, root: tuple[str, str]) -> dict[str, str]:
    """The datasets the impact report of ``root`` lists, with their path kind."""
    body = ok(api.get("/api/v1/impact", {"node": f"dataset:{dataset_id(root)}"}))
    return {item["name"]: item["path"] for item in body["items"] if item["type"] == "dataset"}


def _drawn(api: Client) -> set[tuple[str, str]]:
    """The job's drawn (bipartite) edges, from the job's node, by name."""
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    graph = ok(api.get(f"/api/v1/lineage/graph?node=job:{job.id}&depth=1"))
    names = {node["id"]: node.get("name") for node in graph["nodes"]}
    return {(names[edge["source"]], names[edge["target"]]) for edge in graph["edges"]}


def _marquez(client: Client) -> set[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The Marquez mount's lineage around A: each node with its in and out edges."""
    response = MarquezClient(client).get("/lineage", nodeId=f"dataset:{A[0]}:{A[1]}", depth="5")
    assert response.status_code == 200, response.content
    return {
        (
            node["id"],
            tuple(sorted(edge["origin"] for edge in node["inEdges"])),
            tuple(sorted(edge["destination"] for edge in node["outEdges"])),
        )
        for node in response.json()["graph"]
    }


def _run() -> dict[str, Any]:
    return run_event(TWO, [A, B], [C, D])


def test_a_two_entry_facet_walks_its_pairs_and_draws_the_same_job(api, settings) -> None:
    """Off: the product (A reaches C and D). On: A reaches C only, in the graph and the
    impact report, while the job's drawn edges and the Marquez lineage stay as they were."""
    derive(_run())
    assert _edges() == PRODUCT
    assert _downstream(api, A) == {"public.a", "public.c", "public.d"}
    assert _impact(api, A) == {"public.c": "current", "public.d": "current"}
    assert not RunDatasetPair.objects.exists()  # off, nothing is written
    drawn_off, marquez_off = _drawn(api), _marquez(api)

    _reset()
    settings.LINEAGE = {**settings.LINEAGE, "EXPERIMENTAL_LINEAGE_FACET": True}
    derive(_run())
    assert _edges() == PAIRS
    assert _downstream(api, A) == {"public.a", "public.c"}
    assert _downstream(api, B) == {"public.b", "public.d"}
    assert _impact(api, A) == {"public.c": "current"}
    assert (
        _drawn(api)
        == drawn_off
        == {
            ("public.a", JOB[1]),
            ("public.b", JOB[1]),
            (JOB[1], "public.c"),
            (JOB[1], "public.d"),
        }
    )
    assert _marquez(api) == marquez_off


RUN_EVENTS = [  # one run, the facet's entries spread over its events, one without it
    run_event({"entries": TWO["entries"][:1]}, [A], [C], time="2026-03-01T10:00:00Z"),
    run_event({"entries": TWO["entries"][1:]}, [B], [D], time="2026-03-01T10:02:00Z"),
    run_event(None, [A, B], [C, D], time="2026-03-01T10:05:00Z"),
    job_event(TWO, [], [], time="2026-03-01T09:00:00Z"),
]


@pytest.mark.parametrize(
    ("order", "batches", "duplicates"),
    [([3, 2, 1, 0], [4], []), ([2, 0, 3, 1], [1, 1, 1, 1], [2]), ([1, 2, 0, 3], [2, 2], [0])],
)
def test_the_pairs_are_the_same_in_every_arrival_order(on, order, batches, duplicates) -> None:
    """The run accumulates its pairs over its events (a later event without the facet takes
    none away), first and last seen by LEAST/GREATEST: any order, batching and redelivery
    gives the catalog of the events derived in order (the canonical dump holds the pair rows)."""
    records = [openlineage(event) for event in RUN_EVENTS]
    reference = _derive(records, [0, 1, 2, 3], [4], [])
    assert {(row[2], row[4]) for row in reference["run_pairs"]} == PAIRS
    assert {(row[3], row[5]) for row in reference["static_pairs"]} == PAIRS
    assert _edges() == PAIRS
    assert _derive(records, order, batches, duplicates) == reference
    assert _edges() == PAIRS


def test_a_job_event_declares_its_pairs_and_a_newer_one_replaces_them(api, on) -> None:
    """A JobEvent with two entries declares A → C and B → D: the design-time walk from A
    reaches C only. A newer JobEvent without the facet declares its product again."""
    derive(job_event(TWO, [], []))
    assert _downstream(api, A, "static") == {"public.a", "public.c"}
    assert _impact(api, A) == {"public.c": "declared"}
    assert StaticDatasetPair.objects.count() == 2
    derive(job_event(None, [A, B], [C, D], time="2026-03-01T09:30:00Z"))
    assert not StaticDatasetPair.objects.exists()
    assert _downstream(api, A, "static") == {"public.a", "public.c", "public.d"}


def test_a_rederive_gives_the_same_pairs_and_graph(on) -> None:
    derive(*RUN_EVENTS)
    before = canonical_dump()
    assert rederive(batch_size=2).failed == 0
    assert canonical_dump() == before
    assert _edges() == PAIRS


def test_retention_keeps_the_pairs_edges_through_a_rederive(on) -> None:
    """A retired run's summary holds the edges its pairs made (ADR 0079): no product comes
    back from it, after retention or after a rederive."""
    old = store([openlineage(_run())])
    assert derive_events(old).failed == 0
    _age(old)
    before = _lineage()
    assert _edges() == PAIRS
    assert apply_retention(30).runs == 1
    assert not RunDatasetPair.objects.exists()
    assert _lineage() == before
    assert rederive(batch_size=2).failed == 0
    assert _lineage() == before


def test_purging_the_namespace_removes_its_pair_rows(on) -> None:
    other = str(uuid.UUID(int=41))
    derive(*RUN_EVENTS, run_event(TWO, [A, B], [C, D], run=other))
    assert RunDatasetPair.objects.count() == 4 and StaticDatasetPair.objects.count() == 2
    purge_namespace(WAREHOUSE, by="test")
    assert not RunDatasetPair.objects.exists()
    assert not StaticDatasetPair.objects.exists()


def test_a_run_without_the_facet_writes_no_pairs(on) -> None:
    derive(run_event(None, [A, B], [C, D], run=RUN))
    assert not RunDatasetPair.objects.exists()
    assert _edges() == PRODUCT


def test_a_run_s_pairs_are_cut_at_the_run_edge_cap(on, settings) -> None:
    """Under the same cap as the product (issue 38): the first pairs by (input, output)
    dataset, and the count left out is the pairs over the cap, not the product's."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_RUN_EDGES": 1}
    derive(_run())
    assert _edges() == {("public.a", "public.c")}
    assert Run.objects.get().lineage_edges_cut == 1

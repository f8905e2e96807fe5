"""emissionPattern is honoured (issue 41 item 5, ADR 0091), from the spec's JobTypeJobFacet
examples (tests/fixtures/openlineage/spec-examples/facets/JobTypeJobFacet/2.json: Kafka
Streams, PERIODIC, COMPLETE_SNAPSHOT; the spec's ACCUMULATIVE pattern, its default, on the
same stream). Accumulating periodic events are one run: the union of the datasets each
names, and of its facts. Snapshots are each complete for their window: the run's lineage
and job edges are the newest window's, and a dataset a later snapshot no longer names
leaves them, in any order of the events."""

import copy
import json
from typing import Any

import pytest
from django.test import Client

from catalog.models import Job, Run
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.facets.spec_examples import EXAMPLES

pytestmark = pytest.mark.django_db

RUN = "0193a7c2-5f1e-7b3a-9c4d-0000000000aa"
JOB = ("kafka-streams", "orders_enricher")
TOPICS = "kafka://broker:9092"


def _job_type(content_mode: str) -> dict[str, Any]:
    """The spec's Kafka Streams example, its content mode as given."""
    example = json.loads((EXAMPLES / "JobTypeJobFacet" / "2.json").read_text())
    job_type = copy.deepcopy(example["jobType"])
    job_type["emissionPattern"]["eventContentMode"] = content_mode
    return {"jobType": job_type}


def _windows(content_mode: str) -> list[dict[str, Any]]:
    """START, then a RUNNING per 300-second window: the first reads ``orders`` and
    ``customers``, the second only ``orders`` and ``refunds``; each writes ``enriched``
    with the window's own output statistics and names a run facet of its own."""
    facets = _job_type(content_mode)

    def window(kind: str, seconds: float, inputs: list[str], rows: int, run_facet: str):
        return run_event(
            kind,
            seconds,
            RUN,
            JOB,
            [dataset(TOPICS, name) for name in inputs],
            [
                {
                    **dataset(TOPICS, "enriched"),
                    "outputFacets": {"outputStatistics": facet(rowCount=rows)},
                }
            ],
            run_facets={run_facet: facet(window=seconds)},
            job_facets=facets,
        )

    return [
        window("START", 0, ["orders", "customers"], 0, "startFacet"),
        window("RUNNING", 300, ["orders", "customers"], 120, "windowOne"),
        window("RUNNING", 600, ["orders", "refunds"], 80, "windowTwo"),
    ]


def _graph(api: Client) -> dict[tuple[str, str], dict[str, Any]]:
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    response = api.get(f"/api/v1/lineage/graph?node=job:{job.id}&depth=2")
    assert response.status_code == 200, response.content
    body = response.json()
    names = {node["id"]: node.get("name") for node in body["nodes"]}
    return {
        (edge["kind"], names[edge["source"]] or "", names[edge["target"]] or ""): edge
        for edge in body["edges"]
    }


def _run(api: Client) -> dict[str, Any]:
    [run] = Run.objects.filter(job__name=JOB[1])
    response = api.get(f"/api/v1/runs/{run.run_uuid}")
    assert response.status_code == 200, response.content
    return response.json()


def test_accumulating_windows_are_one_run_with_every_slice(api: Client) -> None:
    derive(*_windows("ACCUMULATIVE"))
    [run] = Run.objects.filter(job__name=JOB[1])
    assert (run.state, run.is_streaming, run.emits_snapshots) == ("RUNNING", True, False)
    edges = _graph(api)
    inputs = {key[1] for key in edges if key[0] == "input"}
    assert inputs == {"orders", "customers", "refunds"}
    assert all(edge["current"] for edge in edges.values())
    body = _run(api)
    # Every window's run facet is the run's: the facts are merged, not the last one's.
    assert {"startFacet", "windowOne", "windowTwo"} <= set(body["facets"])


def test_a_snapshot_replaces_the_one_before_it(api: Client) -> None:
    derive(*_windows("COMPLETE_SNAPSHOT"))
    [run] = Run.objects.filter(job__name=JOB[1])
    assert (run.is_streaming, run.emits_snapshots) == (True, True)
    edges = _graph(api)
    # customers was in the first windows only: the newest snapshot no longer reads it.
    assert {key[1] for key in edges if key[0] == "input"} == {"orders", "refunds"}
    assert {key[2] for key in edges if key[0] == "output"} == {"enriched"}
    assert all(edge["current"] for edge in edges.values())
    # The dataset itself stays, with its history (readable, its last time seen).
    response = api.get("/api/v1/datasets", {"name": "customers"})
    assert response.status_code == 200 and len(response.json()["results"]) == 1


def test_any_order_of_the_snapshots_is_the_same_lineage(api: Client) -> None:
    derive(*reversed(_windows("COMPLETE_SNAPSHOT")))
    edges = _graph(api)
    assert {key[1] for key in edges if key[0] == "input"} == {"orders", "refunds"}


def test_a_snapshot_pattern_on_a_later_event_recomputes_the_run(api: Client) -> None:
    """The first windows said nothing of their pattern; the newest says snapshots."""
    first, second, third = _windows("COMPLETE_SNAPSHOT")
    for event in (first, second):
        event["job"]["facets"] = {}
    derive(first, second)
    assert {key[1] for key in _graph(api) if key[0] == "input"} == {"orders", "customers"}
    derive(third)
    assert {key[1] for key in _graph(api) if key[0] == "input"} == {"orders", "refunds"}


def test_a_bad_emission_pattern_is_accumulating(api: Client) -> None:
    events = _windows("COMPLETE_SNAPSHOT")
    for event in events:
        event["job"]["facets"]["jobType"]["emissionPattern"] = "COMPLETE_SNAPSHOT"
    derive(*events)
    assert not Run.objects.get(job__name=JOB[1]).emits_snapshots
    assert {key[1] for key in _graph(api) if key[0] == "input"} == {
        "orders",
        "customers",
        "refunds",
    }

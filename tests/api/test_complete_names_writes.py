"""A run's writes are the outputs its COMPLETE names (issue 31, ADR 0069 amended).

A START lists what a run plans to touch (Airflow's SQL parser lists every table a ``DROP
TABLE IF EXISTS`` names), its COMPLETE what it wrote; Marquez versions what the COMPLETE
names. So of a completed run's outputs, only those a write event (a COMPLETE, a streaming
job's RUNNING) listed are writes, unless no write event listed any output: then all are.
The rest are attempted I/O, like a failed run's: no producing job, no version, no last
modification, an edge that counts no completed run.
"""

from typing import Any
from urllib.parse import quote

import pytest

from catalog.models import Dataset, Job, LineageEdge
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

PG = "postgres://warehouse:5432"
RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d3101"
JOB = ("airflow", "shop.create_raw")
SOURCE, PLANNED, WRITTEN = "shop.public.src", "shop.public.dropped", "shop.public.raw"
STREAMING = {
    "jobType": facet(processingType="STREAMING", integration="FLINK", jobType="JOB"),
}


def _start() -> dict[str, Any]:
    return run_event(
        "START",
        0,
        RUN,
        job=JOB,
        inputs=[dataset(PG, SOURCE)],
        outputs=[dataset(PG, PLANNED), dataset(PG, WRITTEN)],
    )


def _complete(outputs: list[str] | None) -> dict[str, Any]:
    event = run_event("COMPLETE", 10, RUN, job=JOB, inputs=[dataset(PG, SOURCE)])
    if outputs is None:
        del event["outputs"]
    else:
        event["outputs"] = [dataset(PG, name) for name in outputs]
    return event


def _derive(events: list[dict[str, Any]], together: bool = False) -> None:
    """Each event in its own batch, in order; ``together``: all in one batch."""
    if together:
        derive_events(store([openlineage(event) for event in events]))
        return
    for event in events:
        derive_events(store([openlineage(event)]))


def _dataset(name: str) -> Dataset:
    return Dataset.objects.for_alias(PG, name).get()


def _marquez(api: Any, path: str) -> Any:
    response = api.get(f"/marquez/api/v1/namespaces/{quote(PG, safe='')}/datasets/{path}")
    assert response.status_code == 200, response.content
    return response.json()


def _attempted(api: Any) -> dict[str, bool]:
    run = api.get(f"/api/v1/runs/{RUN}").json()
    assert [i["attempted"] for i in run["inputs"]] == [False]
    return {output["alias"]["name"]: output["attempted"] for output in run["outputs"]}


def _job_edge(api: Any, name: str) -> tuple[int, int, bool]:
    """(runs, completed runs, current) of the job → dataset edge the native graph draws."""
    job, target = Job.objects.get(name=JOB[1]), _dataset(name)
    graph = api.get(f"/api/v1/lineage/graph?node=dataset:{target.id}&depth=1").json()
    [edge] = [e for e in graph["edges"] if e["id"] == f"job:{job.id}->dataset:{target.id}"]
    return edge["run_count"], edge["completed_run_count"], edge["current"]


def _producers(api: Any, name: str) -> tuple[list[str], list[str]]:
    detail = api.get(f"/api/v1/datasets/{_dataset(name).id}").json()
    return (
        [entry["job"]["name"] for entry in detail["producing_jobs"]],
        [entry["job"]["name"] for entry in detail["attempting_jobs"]],
    )


@pytest.mark.parametrize("order", ["start first", "complete first", "one batch"])
def test_the_complete_names_the_writes_and_the_start_only_plans(api, admin_client, order) -> None:
    events = [_start(), _complete([WRITTEN])]
    _derive(events[::-1] if order == "complete first" else events, order == "one batch")
    assert _attempted(api) == {PLANNED: True, WRITTEN: False}
    assert _producers(api, WRITTEN) == ([JOB[1]], [])
    assert _producers(api, PLANNED) == ([], [JOB[1]])
    assert _job_edge(api, WRITTEN) == (1, 1, True)
    # Attempted only: the job's latest completed run did not write it, so not current.
    assert _job_edge(api, PLANNED) == (1, 0, False)
    produced = api.get(f"/api/v1/datasets?producer_job_id={Job.objects.get(name=JOB[1]).id}")
    assert [row["id"] for row in produced.json()["results"]] == [_dataset(WRITTEN).id]
    counts = {
        edge.target.name: (edge.run_count, edge.completed_run_count)
        for edge in LineageEdge.objects.select_related("target")
    }
    assert counts == {PLANNED: (1, 0), WRITTEN: (1, 1)}
    # Marquez versions what the COMPLETE names.
    assert _marquez(api, WRITTEN)["currentVersion"] == RUN
    planned = _marquez(api, PLANNED)
    assert planned["currentVersion"] is None and planned["lastModifiedAt"] is None
    assert _marquez(api, f"{PLANNED}/versions")["totalCount"] == 0
    assert [v["version"] for v in _marquez(api, f"{WRITTEN}/versions")["versions"]] == [RUN]
    shown = api.get(f"/marquez/api/v1/jobs/runs/{RUN}").json()
    assert [o["datasetVersionId"]["name"] for o in shown["outputDatasetVersions"]] == [WRITTEN]
    assert [i["datasetVersionId"]["name"] for i in shown["inputDatasetVersions"]] == [SOURCE]
    page = admin_client.get(f"/admin/catalog/dataset/{_dataset(PLANNED).id}/change/")
    assert "attempted only</td>" in page.content.decode()
    assert "written</td>" not in page.content.decode()


@pytest.mark.parametrize("outputs", [[], None], ids=["empty outputs", "no outputs key"])
def test_a_complete_that_names_no_output_keeps_every_output_a_write(api, outputs) -> None:
    """Producers that list the datasets on START only: the COMPLETE names none, so every
    output of the completed run is a write, as before."""
    _derive([_complete(outputs), _start()])
    assert _attempted(api) == {PLANNED: False, WRITTEN: False}
    for name in (PLANNED, WRITTEN):
        assert _producers(api, name) == ([JOB[1]], [])
        assert _job_edge(api, name) == (1, 1, True)
        assert _marquez(api, name)["currentVersion"] == RUN


def test_a_streaming_run_writes_what_its_running_events_name(api) -> None:
    """A streaming job's RUNNING is a write event (its run writes before it ends): while
    no write event names an output all its outputs are writes; once one does, the outputs
    write events named are, whatever the START planned."""
    start = {**_start(), "job": {**_start()["job"], "facets": STREAMING}}
    _derive([start])
    assert _attempted(api) == {PLANNED: False, WRITTEN: False}  # RUNNING, named by no write
    running = run_event(
        "RUNNING", 5, RUN, job=JOB, outputs=[dataset(PG, WRITTEN)], job_facets=STREAMING
    )
    _derive([running])
    assert api.get(f"/api/v1/runs/{RUN}").json()["state"] == "RUNNING"
    assert _attempted(api) == {PLANNED: True, WRITTEN: False}
    assert _marquez(api, WRITTEN)["currentVersion"] == RUN
    assert _marquez(api, PLANNED)["currentVersion"] is None
    assert _job_edge(api, PLANNED) == (1, 0, False)

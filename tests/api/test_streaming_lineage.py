"""Streaming jobs show lineage while they run (issue 41 item 5, ADR 0091): a Flink job's
RUNNING events (tests/fixtures/openlineage/project/flink_streaming_*.json) draw
its edges, current while it runs, even when an older deployment of the job completed; the
periodic accumulating events are one run, the union of what each names; once the stream
completes, fails or aborts its edges follow the batch rules."""

import copy
from typing import Any

import pytest
from django.test import Client

from catalog.models import Job, Run
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db

JOB = ("flink_job_namespace", "flink_examples_stateful")
TOPIC = "kafka://kafka-cluster-prod:9092"
OLD_RUN = "0193a7c2-5f1e-7b3a-9c4d-000000000001"


def _stream() -> list[dict[str, Any]]:
    names = (
        "flink_streaming_start",
        "flink_streaming_checkpoint_1",
        "flink_streaming_checkpoint_2",
    )
    return [fixture(name) for name in names]


def _old_deployment() -> list[dict[str, Any]]:
    """A batch-like earlier run of the same job that completed, reading a retired topic."""
    start, *_ = copy.deepcopy(_stream())
    start["run"]["runId"] = OLD_RUN
    start["eventTime"] = "2026-11-19T10:00:00.000Z"
    start["inputs"][0]["name"] = "io.openlineage.flink.kafka.legacy"
    done = copy.deepcopy(start)
    done["eventType"], done["eventTime"] = "COMPLETE", "2026-11-19T11:00:00.000Z"
    return [start, done]


def _edges(api: Client) -> dict[tuple[str, str], dict[str, Any]]:
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    response = api.get(f"/api/v1/lineage/graph?node=job:{job.id}&depth=1")
    assert response.status_code == 200, response.content
    body = response.json()
    names = {node["id"]: node["name"] for node in body["nodes"]}
    return {
        (edge["kind"], names[edge["source"] if edge["kind"] == "input" else edge["target"]]): edge
        for edge in body["edges"]
    }


def _current(api: Client) -> dict[tuple[str, str], bool]:
    return {key: edge["current"] for key, edge in _edges(api).items()}


def test_the_running_stream_draws_its_edges_current_and_merges_its_events(api: Client) -> None:
    derive(*_stream())
    [run] = Run.objects.filter(job__name=JOB[1])
    assert (run.state, run.is_streaming, run.ended_at) == ("RUNNING", True, None)
    edges = _edges(api)
    assert set(edges) == {
        ("input", "io.openlineage.flink.kafka.input1"),
        ("input", "io.openlineage.flink.kafka.input2"),  # only the second checkpoint's
        ("output", "io.openlineage.flink.kafka.output"),
    }
    for edge in edges.values():
        assert (edge["current"], edge["run_count"], edge["completed_run_count"]) == (True, 1, 1)
        assert edge["last_run_id"] == str(run.run_uuid)


def test_a_running_stream_is_current_over_an_older_completed_deployment(api: Client) -> None:
    derive(*_old_deployment(), *_stream())
    assert _current(api) == {
        ("input", "io.openlineage.flink.kafka.legacy"): False,  # the old run's only
        ("input", "io.openlineage.flink.kafka.input1"): True,
        ("input", "io.openlineage.flink.kafka.input2"): True,
        ("output", "io.openlineage.flink.kafka.output"): True,
    }


@pytest.mark.parametrize("ending", ["COMPLETE", "FAIL", "ABORT"])
def test_a_stream_that_ends_follows_the_batch_rules(api: Client, ending: str) -> None:
    stream = _stream()
    end = copy.deepcopy(stream[-1])
    end["eventType"], end["eventTime"] = ending, "2026-11-20T10:03:00.000Z"
    end["inputs"], end["outputs"] = [], []
    derive(*_old_deployment(), *stream, end)
    [run] = Run.objects.filter(job__name=JOB[1]).exclude(run_id_text=OLD_RUN)
    assert run.state == ending and run.ended_at is not None
    current = _current(api)
    if ending == "COMPLETE":  # the newest completed run: its edges are current
        assert current[("input", "io.openlineage.flink.kafka.input2")] is True
        assert current[("input", "io.openlineage.flink.kafka.legacy")] is False
    else:  # failed or aborted: nothing written; the older completed run is the reference
        assert current[("input", "io.openlineage.flink.kafka.input2")] is False
        assert current[("input", "io.openlineage.flink.kafka.legacy")] is True


def test_any_order_of_the_periodic_events_is_the_same_run(api: Client) -> None:
    derive(*reversed(_stream()))
    reversed_edges = {key: edge["current"] for key, edge in _edges(api).items()}
    [run] = Run.objects.filter(job__name=JOB[1])
    assert run.state == "RUNNING"
    assert reversed_edges == {
        ("input", "io.openlineage.flink.kafka.input1"): True,
        ("input", "io.openlineage.flink.kafka.input2"): True,
        ("output", "io.openlineage.flink.kafka.output"): True,
    }


def test_a_bad_emission_pattern_warns_and_is_never_refused(ingest_client: Client) -> None:
    start = _stream()[0]
    start["job"]["facets"]["jobType"]["emissionPattern"] = {"eventTrigger": 3}
    response = ingest_client.post("/api/v1/lineage", data=start, content_type="application/json")
    assert response.status_code == 201, response.content
    assert {w["facet"] for w in response.json()["warnings"]} == {"/job/facets/jobType"}

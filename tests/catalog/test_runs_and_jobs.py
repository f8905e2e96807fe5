"""Run state by content and eventTime, run/job facets, parents, streaming, odd runIds."""

import uuid

import pytest

from catalog.models import Job, Run, RunState
from catalog.names.naming import run_uuid
from catalog.services.derive import derive_events
from tests.catalog.conftest import at, facet, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db


def derive(*events: dict) -> None:
    for event in events:  # one event per batch: the hardest arrival order
        derive_events(store([openlineage(event)]))


def test_late_start_does_not_reopen_completed_run(new_run_id: str) -> None:
    derive(run_event("COMPLETE", 10, new_run_id), run_event("START", 0, new_run_id))
    derive(run_event("RUNNING", 20, new_run_id))  # even a RUNNING with a later eventTime
    run = Run.objects.get(run_uuid=new_run_id)
    assert run.state == RunState.COMPLETE
    assert run.started_at.isoformat().startswith("2026-01-01T12:00:00")
    assert run.ended_at.isoformat().startswith("2026-01-01T12:00:10")
    assert run.duration.total_seconds() == 10


def test_latest_terminal_wins_and_ties_break_by_fixed_rank(new_run_id: str) -> None:
    derive(run_event("FAIL", 30, new_run_id), run_event("COMPLETE", 20, new_run_id))
    assert Run.objects.get(run_uuid=new_run_id).state == RunState.FAIL
    other = str(uuid.uuid4())
    derive(run_event("COMPLETE", 5, other), run_event("FAIL", 5, other))
    derive(run_event("ABORT", 5, other))
    # Same eventTime: FAIL > ABORT > COMPLETE, whatever the arrival order.
    assert Run.objects.get(run_uuid=other).state == RunState.FAIL


def test_run_facets_merge_per_key_by_event_time(new_run_id: str) -> None:
    nominal = facet(nominalStartTime=at(-60), nominalEndTime=at(0))
    error = facet(message="boom", programmingLanguage="python")
    derive(
        run_event("FAIL", 10, new_run_id, run_facets={"errorMessage": error, "x": {"v": 2}}),
        run_event("START", 0, new_run_id, run_facets={"nominalTime": nominal, "x": {"v": 1}}),
    )
    run = Run.objects.get(run_uuid=new_run_id)
    assert run.facets["x"] == {"v": 2}  # the later event's value, though it arrived first
    assert run.error_message == "boom"
    assert run.nominal_start_time.isoformat().startswith("2026-01-01T11:59:00")


def test_streaming_job_without_terminal_event_is_running_with_last_heartbeat(
    new_run_id: str,
) -> None:
    streaming = {"jobType": facet(processingType="STREAMING", integration="FLINK", jobType="JOB")}
    derive(
        run_event("START", 0, new_run_id, job_facets=streaming),
        run_event("OTHER", 300, new_run_id, job_facets=streaming),
    )
    run = Run.objects.get(run_uuid=new_run_id)
    assert run.state == RunState.RUNNING and run.is_streaming
    assert run.last_event_time.isoformat().startswith("2026-01-01T12:05:00")
    assert run.ended_at is None
    assert Job.objects.get(name="job").processing_type == "STREAMING"


def test_non_uuid_run_ids_map_deterministically_per_job() -> None:
    derive(run_event("COMPLETE", 1, "run_id", job=("a", "one")))
    derive(run_event("COMPLETE", 1, "run_id", job=("a", "two")))
    runs = Run.objects.filter(run_id_text="run_id")
    assert runs.count() == 2
    assert {run.run_uuid for run in runs} == {
        run_uuid("run_id", "a", "one"),
        run_uuid("run_id", "a", "two"),
    }


def test_child_first_creates_placeholder_parent_completed_by_its_own_events() -> None:
    parent_run, child_run = str(uuid.uuid4()), str(uuid.uuid4())
    parent_facet = {
        "parent": facet(run={"runId": parent_run}, job={"namespace": "airflow", "name": "dag"})
    }
    derive(run_event("START", 1, child_run, job=("airflow", "dag.task"), run_facets=parent_facet))
    parent = Job.objects.get(namespace="airflow", name="dag")
    assert parent.is_placeholder
    child = Job.objects.get(name="dag.task")
    assert child.parent_id == parent.id
    placeholder = Run.objects.get(run_uuid=parent_run)
    assert placeholder.state == RunState.UNKNOWN
    assert Run.objects.get(run_uuid=child_run).parent_run_id == placeholder.id

    docs = {"documentation": facet(description="The DAG")}
    derive(run_event("COMPLETE", 5, parent_run, job=("airflow", "dag"), job_facets=docs))
    parent.refresh_from_db()
    placeholder.refresh_from_db()
    assert not parent.is_placeholder and parent.description == "The DAG"
    assert placeholder.state == RunState.COMPLETE and not placeholder.is_placeholder


def test_job_event_declares_inputs_and_outputs() -> None:
    event = {
        "eventTime": at(0),
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "static", "name": "etl", "facets": {"sql": facet(query="select 1")}},
        "inputs": [{"namespace": "postgres://db:5432", "name": "a.b.c"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "a.b.d"}],
    }
    derive(event)
    job = Job.objects.get(name="etl")
    assert job.facets["sql"]["query"] == "select 1"
    assert sorted((row.direction, row.declared) for row in job.datasets.all()) == [
        ("input", True),
        ("output", True),
    ]


def test_a_job_named_with_credentials_is_found_by_the_name_as_sent() -> None:
    """Derivation keeps a job's name without credentials; a lookup by the name a producer
    sent (``Job.objects.for_name``, ``Run.objects.for_run_id``) keys it the same way
    (``naming.job_key``), so it finds the job and its run rather than nothing."""
    sent = ("postgres://etl:S3CRET@db:5432", "load?token=S3CRET")
    derive(run_event("START", 0, "nightly-1", job=sent))
    job = Job.objects.for_name(*sent).get()
    assert "S3CRET" not in job.namespace + job.name
    assert Run.objects.for_run_id("nightly-1", *sent).get().job == job

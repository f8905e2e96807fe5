"""catalog/services/rederive_jobs.py: "Running a job twice is safe: re-deriving is
idempotent, progress restarts" (ADR 0200). The same steward's job is run twice in a row
(a task sent twice), then by two workers at once: the catalog is the one the events gave,
every event ends derived, and the row counts one run's progress, not the two summed."""

import threading
import uuid
from typing import Any

import pytest
from django.db import connection

from catalog.models import RederiveJob
from catalog.services import rederive_jobs
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store


def _events() -> list[int]:
    events = []
    for index in range(3):
        run_id = str(uuid.uuid4())
        io = {
            "inputs": [dataset("pg://db:5432", "orders")],
            "outputs": [dataset("s3://lake", f"out{index}")],
        }
        events.append(run_event("START", index * 10, run_id, job=("etl", f"job{index}"), **io))
        events.append(
            run_event("COMPLETE", index * 10 + 5, run_id, job=("etl", f"job{index}"), **io)
        )
    ids = store([openlineage(event) for event in events])
    assert derive_events(ids).failed == 0
    return ids


def _progress(job_id: int) -> tuple[Any, ...]:
    job = RederiveJob.objects.get(pk=job_id)
    return job.state, job.claimed, job.derived, job.failed, job.total


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_a_rederive_job_run_twice_in_a_row_and_at_once_gives_the_same_catalog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rederive_jobs, "REDERIVE_BATCH", 2)  # three batches a run
    ids = _events()
    before = canonical_dump()
    job_id = RederiveJob.objects.create(
        description="re-derive 6 event(s)", event_ids=ids, total=len(ids)
    ).pk
    for _ in range(2):  # the task sent twice, one after the other
        rederive_jobs.run_rederive_job(job_id)
        assert _progress(job_id) == ("done", 6, 6, 0, 6)  # this run's, not the two summed
        assert canonical_dump() == before

    errors: list[BaseException] = []

    def run() -> None:
        try:
            rederive_jobs.run_rederive_job(job_id)
        except BaseException as error:  # said by the assertion below
            errors.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=run) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert errors == []
    assert not Event.objects.exclude(derivation_status="derived").exists()
    assert canonical_dump() == before
    assert RederiveJob.objects.get(pk=job_id).state == "done"

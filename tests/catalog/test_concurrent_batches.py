"""Two derivation batches over the same jobs and datasets at once (ADR 0049).

Each batch runs in its own thread, connection and transaction. Both finish their free
part before either goes on (a barrier), so they then contend for the same job, alias,
dataset and edge rows at the same moment, and one run is in both batches. Neither may
deadlock or wait in its free part, and the catalog must equal a rederive of the events
in one batch.
"""

import logging
import threading
import uuid
from typing import Any

import pytest
from django.db import connection, transaction

from catalog.models import LineageEdge
from catalog.services.derivation import batch
from catalog.services.derive import derive_events, derived_tables
from ingest.models import Event
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store

JOBS = 3


def _output() -> dict[str, Any]:
    fields = {
        "id": {"inputFields": [{"namespace": "s3://shared", "name": "in", "field": "id"}]},
        "v": {"inputFields": [{"namespace": "s3://shared", "name": "lookup", "field": "v"}]},
    }
    schema = facet(fields=[{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}])
    return dataset("s3://shared", "out", schema=schema, columnLineage=facet(fields=fields))


def _run(run_id: str, job: int, kinds: list[str], second: int, dag: str = "") -> list:
    parent = {"run": {"runId": dag}, "job": {"namespace": "ns", "name": "dag"}}
    return [
        openlineage(
            run_event(
                kind,
                second + offset,
                run_id,
                job=("ns", f"job{job}"),
                inputs=[dataset("s3://shared", "in"), dataset("s3://shared", "lookup")],
                outputs=[_output()],
                job_facets={"documentation": facet(description=f"at {second + offset}")},
                run_facets={"parent": facet(**parent)} if dag else None,
            )
        )
        for offset, kind in enumerate(kinds)
    ]


def _seed(job: int) -> list:
    return _run(str(uuid.UUID(int=10_000 + job)), job, ["COMPLETE"], 0, _dag(job))


def _dag(number: int) -> str:
    return str(uuid.UUID(int=50_000 + number % 2))


def _halves(round_: int) -> tuple[list, list]:
    """Two batches: six new runs each over the same three jobs and datasets, and one run whose
    START is in the first and COMPLETE in the second. Every run of a round is a task of the
    same DAG run, which neither batch carries an event of: both only name it."""
    dag = _dag(round_)
    first, second = [], []
    for n in range(12):
        run_id = str(uuid.UUID(int=round_ * 100 + n + 1))
        (first if n < 6 else second).extend(
            _run(run_id, n % JOBS, ["START", "COMPLETE"], round_ * 1000 + n * 10, dag)
        )
    shared = str(uuid.UUID(int=round_ * 100 + 99))
    first.extend(_run(shared, 0, ["START"], round_ * 1000 + 500))
    second.extend(_run(shared, 0, ["COMPLETE"], round_ * 1000 + 600))
    return first, second


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_batches_over_the_same_rows_neither_deadlocks_nor_differs(
    monkeypatch, caplog
) -> None:
    # The jobs, aliases and datasets exist before: a row both batches would insert makes the
    # second wait for the first to commit (a unique index), only the first time it is named.
    derive_events(store([record for job in range(JOBS) for record in _seed(job)]))
    barrier = threading.Barrier(2, timeout=30)
    split_runs = batch.split_runs

    held: list = []

    def split_then_meet(facts, named):  # the end of each batch's run locks in its free part
        result = split_runs(facts, named)
        held.extend(facts.runs[key].run_uuid for key in result[1])
        barrier.wait()
        return result

    monkeypatch.setattr(batch, "split_runs", split_then_meet)
    caplog.set_level(logging.INFO, logger="catalog.services.derivation.batch")
    errors: list[BaseException] = []

    def work(event_ids: list[int]) -> None:
        try:
            batch.derive_event_ids(event_ids)
        except BaseException as error:
            errors.append(error)
            barrier.abort()
        finally:
            connection.close()

    for round_ in range(3):
        halves = [store(half) for half in _halves(round_)]
        threads = [threading.Thread(target=work, args=(ids,)) for ids in halves]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        barrier.reset()
    assert not [record for record in caplog.records if "derive_retry" in record.getMessage()]
    # Only the run both batches carry waited; the DAG run they both name did not make
    # either batch hold back its tasks.
    assert set(held) <= {uuid.UUID(int=round_ * 100 + 99) for round_ in range(3)}
    assert held
    assert not Event.objects.exclude(derivation_status="derived").exists()
    concurrent = canonical_dump()

    monkeypatch.setattr(batch, "split_runs", split_runs)
    with transaction.atomic(), connection.cursor() as cursor:  # foreign keys checked at commit
        for table in derived_tables():
            cursor.execute(f"DELETE FROM {table}")
    Event.objects.update(derivation_status="pending")
    derive_events(list(Event.objects.order_by("id").values_list("id", flat=True)))
    assert canonical_dump() == concurrent
    # Per job, an edge from each input: its seed run and 4 runs a round (and job0 the
    # shared run) over 3 rounds.
    counts = LineageEdge.objects.values_list("source__name", "job__name", "run_count")
    assert sorted(counts) == sorted(
        (source, f"job{job}", 16 if job == 0 else 13)
        for source in ("in", "lookup")
        for job in range(JOBS)
    )

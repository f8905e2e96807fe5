"""catalog/services/derivation/edge_runs.py: "A run another worker adds to the edge
meanwhile cannot be lost: its row references the edge, so the transaction that commits
second fails the foreign-key check and is retried, re-deriving from the facts" (ADR 0200
left it untested; ADR 0203 holds it).

Two batches that touch one lineage edge usually share its job's row (every run of the edge
is of that job), and the lock order of locks.py then runs their contended parts one after
the other. A merge does not: the batch that merges two datasets recomputes the edges of
every run that named the merged-away one, whatever its job, without locking that job. With
``LINEAGE_MAX_RUN_EDGES`` at 1 a run keeps only its pair with the smallest input dataset id,
so a merge into a dataset with a smaller id moves the run off the edge it had, which is
left empty and deleted by id (``delete_empty``), while another batch adds its own run to
that edge.

The test's own transaction holds the job edge the adding batch (B) writes right after its
lineage edges, so B stops there with its run's row on the edge and its transaction open.
The merging batch (A) then finds the edge empty (B's row is not committed) and waits to
delete it. Released, B commits; A's delete meets B's row, fails the foreign key and is
derived again, finding B's run.
"""

import logging
import threading
import time
import uuid
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, connections, transaction

from catalog.models import Dataset, LineageEdge
from catalog.services.derive import derive_events, rederive
from ingest.models import Event
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store

# The merged datasets (a, c) and the edge's (b, t) in two namespaces, and the merging
# job in a third: a batch that changes a dataset's or job's times updates its namespace's
# summary row (ADR 0121), which would make one batch wait for the other before either
# reached its edges.
ONE, TWO = "s3://one", "s3://two"
# A statement of another backend of this database waiting for a lock.
_WAITING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND wait_event_type = 'Lock' AND query LIKE %s
"""


def _until(condition: Any, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, (what, _waits())
        time.sleep(0.02)


def _waits() -> list[tuple[str, str]]:
    """What the other backends of this database wait in (for a failure's message)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT wait_event_type, left(query, 60) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchall()


def _waiting_in(statement: str) -> bool:
    with connection.cursor() as cursor:
        # Read inside the test's transaction, the activity view would be the first read's.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(_WAITING, [f"{statement}%"])
        return bool(cursor.fetchone()[0])


def _derive_one(seconds: float, job: str, **datasets: Any) -> int:
    event = run_event("COMPLETE", seconds, str(uuid.uuid4()), job=("ns", job), **datasets)
    (event_id,) = store([openlineage(event)])
    derive_events([event_id])
    return event_id


def _edge(source: tuple[str, str], target: tuple[str, str]) -> LineageEdge | None:
    source_id = Dataset.objects.for_alias(*source).get().pk
    target_id = Dataset.objects.for_alias(*target).get().pk
    return LineageEdge.objects.filter(source_id=source_id, target_id=target_id).first()


def _runs(edge: LineageEdge) -> set[str]:
    return {str(run_uuid) for run_uuid in edge.runs.values_list("run__run_uuid", flat=True)}


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(90)
def test_a_run_added_to_an_edge_a_merge_empties_at_once_is_kept(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="catalog.services.derivation.batch")
    monkeypatch.setitem(settings.LINEAGE, "MAX_RUN_EDGES", 1)
    # Datasets a < b < c by id, each written by its own run of job k.
    for seconds, name in enumerate([(ONE, "a"), (TWO, "b"), (ONE, "c")]):
        _derive_one(seconds, "k", outputs=[dataset(*name)])
    # Job j's first run reads b and c and writes t: cut to one pair, it keeps b -> t.
    first = str(uuid.uuid4())
    derive_events(
        store(
            [
                openlineage(
                    run_event(
                        "COMPLETE",
                        4,
                        first,
                        job=("ns", "j"),
                        inputs=[dataset(TWO, "b"), dataset(ONE, "c")],
                        outputs=[dataset(TWO, "t")],
                    )
                )
            ]
        )
    )
    edge = _edge((TWO, "b"), (TWO, "t"))
    assert edge is not None and _runs(edge) == {first}
    # A: job m writes c, a symlink of a: c's dataset merges into a's (the survivor, its name
    # first), and job j's first run, which read c, now keeps a -> t and leaves b -> t empty.
    symlink = facet(identifiers=[{"namespace": ONE, "name": "a", "type": "LOCATION"}])
    (merging,) = store(
        [
            openlineage(
                run_event(
                    "COMPLETE",
                    6,
                    str(uuid.uuid4()),
                    job=("other", "m"),
                    outputs=[dataset(ONE, "c", symlinks=symlink)],
                )
            )
        ]
    )
    # B: job j's second run reads b and writes t: one more run on b -> t.
    second = str(uuid.uuid4())
    (adding,) = store(
        [
            openlineage(
                run_event(
                    "COMPLETE",
                    8,
                    second,
                    job=("ns", "j"),
                    inputs=[dataset(TWO, "b")],
                    outputs=[dataset(TWO, "t")],
                )
            )
        ]
    )
    target = Dataset.objects.for_alias(TWO, "t").get().pk
    answers: dict[str, Any] = {}

    def derive(name: str, event_id: int) -> None:
        try:
            answers[name] = derive_events([event_id])
        except BaseException as error:  # said by the assertions below
            answers[name] = error
        finally:
            connection.close()

    threads = [
        threading.Thread(target=derive, args=("adding", adding)),
        threading.Thread(target=derive, args=("merging", merging)),
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        # The job edge j -> t, which B upserts right after its lineage edges.
        cursor.execute(
            "SELECT 1 FROM catalog_job_edge WHERE job_id = (SELECT id FROM catalog_job "
            "WHERE name = 'j') AND dataset_id = %s AND direction = 'output' FOR UPDATE",
            [target],
        )
        assert cursor.fetchone() is not None
        threads[0].start()
        _until(lambda: _waiting_in("\nINSERT INTO catalog_job_edge"), "B never reached j -> t")
        threads[1].start()
        _until(
            lambda: _waiting_in("DELETE FROM catalog_lineage_edge WHERE"),
            "A never waited to delete b -> t",
        )
    for thread in threads:
        thread.join(60)
    for name in ("adding", "merging"):
        assert not isinstance(answers[name], BaseException), answers[name]
        assert (answers[name].derived, answers[name].failed) == (1, 0), answers[name]
    edge = _edge((TWO, "b"), (TWO, "t"))
    assert edge is not None, "B's run was lost with the edge"
    assert _runs(edge) == {second}
    # A's first try met B's row (the foreign key) and was derived again: the interleaving
    # the test builds did happen.
    assert "derive_batch_failed events=1 retrying_one_by_one" in caplog.text
    assert (edge.run_count, edge.completed_run_count) == (1, 1)
    moved = _edge((ONE, "a"), (TWO, "t"))
    assert moved is not None and _runs(moved) == {first}
    assert set(Event.objects.values_list("derivation_status", flat=True)) == {"derived"}
    concurrent = canonical_dump()
    rederive(batch_size=1)  # the same events one at a time, in order
    assert canonical_dump() == concurrent
    connections.close_all()

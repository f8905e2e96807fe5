"""catalog/services/derivation/edge_runs.py: "A run another worker adds to the edge
meanwhile cannot be lost: its row references the edge, so the batch deleting the edge ...
fails the foreign-key check and is derived again from the facts" (ADR 0200 left it
untested; ADR 0203 holds it, and derives such a batch again instead of counting the race
as a poison event's failure).

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
derived again, finding B's run. The second test has A's second try meet the same race.
The merged datasets (a, c) and the edges' (b, t) are in two namespaces (below).
"""

import logging
import threading
import time
import uuid
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, connections, transaction

from catalog.models import Dataset, DatasetAlias, LineageEdge
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


def _store(seconds: float, run_id: str, job: tuple[str, str], **datasets: Any) -> int:
    (event_id,) = store([openlineage(run_event("COMPLETE", seconds, run_id, job=job, **datasets))])
    return event_id


def _cut_run(seconds: float, job: str, source: str, target: str) -> str:
    """A run of ``job`` reading ``source`` and c, writing ``target`` (in TWO), derived: cut
    to one pair, it keeps source -> target. Its runId."""
    run_id = str(uuid.uuid4())
    inputs = [dataset(TWO, source), dataset(ONE, "c")]
    derive_events(
        [_store(seconds, run_id, ("ns", job), inputs=inputs, outputs=[dataset(TWO, target)])]
    )
    edge = _edge((TWO, source), (TWO, target))
    assert edge is not None and _runs(edge) == {run_id}
    return run_id


def _merging(seconds: float) -> int:
    """Job m writes c, a symlink of a: c's dataset merges into a's (the survivor, its name
    first), and every run that read c now keeps its pair from a."""
    symlink = facet(identifiers=[{"namespace": ONE, "name": "a", "type": "LOCATION"}])
    return _store(
        seconds, str(uuid.uuid4()), ("other", "m"), outputs=[dataset(ONE, "c", symlinks=symlink)]
    )


def _adding(seconds: float, job: str, source: str, target: str) -> tuple[int, str]:
    """A run of ``job`` reading ``source``, writing ``target``: one more run on that edge.
    Its event and runId."""
    run_id = str(uuid.uuid4())
    inputs, outputs = [dataset(TWO, source)], [dataset(TWO, target)]
    return _store(seconds, run_id, ("ns", job), inputs=inputs, outputs=outputs), run_id


def _job_edge_lock(job: str, target: str) -> tuple[str, list[Any]]:
    """The statement locking the job edge ``job`` -> ``target``, which a batch of the job
    upserts right after its lineage edges."""
    return (
        "SELECT 1 FROM catalog_job_edge WHERE job_id = (SELECT id FROM catalog_job "
        "WHERE name = %s) AND dataset_id = %s AND direction = 'output' FOR UPDATE",
        [job, Dataset.objects.for_alias(TWO, target).get().pk],
    )


class _Hold:
    """A transaction on a connection of its own (a thread) that takes a lock by
    ``statement`` and keeps it until ``release``."""

    def __init__(self, statement: str, params: list[Any]) -> None:
        self._go = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._hold, args=(statement, params))
        self._thread.start()

    def _hold(self, statement: str, params: list[Any]) -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement, params)
                assert cursor.fetchone() is not None
                assert self._go.wait(60)
        except BaseException as error:  # said by ``release``
            self.error = error
        finally:
            connection.close()

    def release(self) -> None:
        self._go.set()
        self._thread.join(60)
        assert self.error is None, self.error


def _derive_in_thread(answers: dict[str, Any], name: str, event_id: int) -> threading.Thread:
    def derive() -> None:
        try:
            answers[name] = derive_events([event_id])
        except BaseException as error:  # said by the test's assertions
            answers[name] = error
        finally:
            connection.close()

    thread = threading.Thread(target=derive)
    thread.start()
    return thread


def _derived_once(answers: dict[str, Any]) -> None:
    for name, answer in answers.items():
        assert not isinstance(answer, BaseException), (name, answer)
        assert (answer.derived, answer.failed) == (1, 0), (name, answer)


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
    caplog.set_level(logging.INFO, logger="catalog.services.derivation.batch")
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
    assert "derive_foreign_key_retry attempt=1 events=1" in caplog.text
    assert "derive_batch_failed" not in caplog.text
    assert (edge.run_count, edge.completed_run_count) == (1, 1)
    moved = _edge((ONE, "a"), (TWO, "t"))
    assert moved is not None and _runs(moved) == {first}
    assert set(Event.objects.values_list("derivation_status", flat=True)) == {"derived"}
    concurrent = canonical_dump()
    rederive(batch_size=1)  # the same events one at a time, in order
    assert canonical_dump() == concurrent
    connections.close_all()


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_a_merge_that_meets_a_second_added_run_in_its_retry_is_derived_not_failed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The retry of the first test, met by the same race again: A merges c into a, which
    empties b -> t (job j) and b2 -> t2 (job j2). B adds a run to b -> t, A's first try
    fails on it; while A's retry waits for alias a (held by the test, which queued for it
    behind A's first try), B' adds a run to b2 -> t2 and A's retry fails on that one. A
    foreign-key failure is a row another batch committed meanwhile, not a poison event: A
    is derived again, not marked failed."""
    caplog.set_level(logging.INFO, logger="catalog.services.derivation.batch")
    monkeypatch.setitem(settings.LINEAGE, "MAX_RUN_EDGES", 1)
    for seconds, name in enumerate([(ONE, "a"), (TWO, "b"), (TWO, "b2"), (ONE, "c")]):
        _derive_one(seconds, "k", outputs=[dataset(*name)])
    _cut_run(4, "j", "b", "t")
    _cut_run(5, "j2", "b2", "t2")
    merging = _merging(6)
    adding, second = _adding(8, "j", "b", "t")
    adding_again, third = _adding(9, "j2", "b2", "t2")
    answers: dict[str, Any] = {}
    hold_b, hold_b_again = _Hold(*_job_edge_lock("j", "t")), _Hold(*_job_edge_lock("j2", "t2"))
    threads = [_derive_in_thread(answers, "B", adding)]
    _until(lambda: _waiting_in("\nINSERT INTO catalog_job_edge"), "B never reached j -> t")
    threads.append(_derive_in_thread(answers, "A", merging))
    _until(lambda: _waiting_in("DELETE FROM catalog_lineage_edge WHERE"), "A never waited")
    # Queued behind A's first try for alias a: A's retry waits for it.
    alias_a = DatasetAlias.objects.get(namespace=ONE, name="a").pk
    hold_a = _Hold("SELECT 1 FROM catalog_dataset_alias WHERE id = %s FOR NO KEY UPDATE", [alias_a])
    _until(lambda: _waiting_in("SELECT 1 FROM catalog_dataset_alias"), "never queued for a")
    hold_b.release()  # B commits; A's first try fails on B's row
    threads[0].join(60)
    _until(lambda: _waiting_in('SELECT "catalog_dataset_alias"'), "A's retry never waited")
    threads.append(_derive_in_thread(answers, "B'", adding_again))
    _until(lambda: _waiting_in("\nINSERT INTO catalog_job_edge"), "B' never reached j2 -> t2")
    hold_a.release()  # A's retry finds b2 -> t2 empty and waits for B' to delete it
    _until(lambda: _waiting_in("DELETE FROM catalog_lineage_edge WHERE"), "A's retry never waited")
    hold_b_again.release()  # B' commits; A's retry fails on B''s row
    for thread in threads:
        thread.join(60)
    _derived_once(answers)
    for source, target, run_id in (("b", "t", second), ("b2", "t2", third)):
        edge = _edge((TWO, source), (TWO, target))
        assert edge is not None and _runs(edge) == {run_id}, (source, target)
    assert set(Event.objects.values_list("derivation_status", flat=True)) == {"derived"}
    # Both races did happen, and A's batch was tried a third time, not event by event.
    assert "derive_foreign_key_retry attempt=2 events=1" in caplog.text
    assert "derive_batch_failed" not in caplog.text
    concurrent = canonical_dump()
    rederive(batch_size=1)
    assert canonical_dump() == concurrent
    connections.close_all()

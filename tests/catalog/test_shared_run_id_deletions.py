"""``shares_run_id`` when runs are deleted (ADR 0202): every service that deletes runs
(retention, a namespace purge, the purge's rebuild of another job) unflags the run a runId
kept alone, in its own transaction, for a UUID runId and a text one alike; a runId still
shared by two jobs keeps their flags. Before, the last sharer stayed flagged, and the run
detail and the event detail went on calling its runId shared; catalog migration 0044
unflags what such deletions left.
"""

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from catalog.models import Run
from catalog.services.derivation.run_conflicts import unflag_all_left_alone
from catalog.services.derive import derive_events
from catalog.services.purge import purge_namespace
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, run_texts_held, store

pytestmark = pytest.mark.django_db

TEXT = "scheduled__2026-01-01T00:00:00+00:00"
UUID = "0b1f3c1e-6a8e-4c7b-9d7e-2f1a3b4c5d6e"
GONE = "mysql://decommissioned:3306"


def _event(job: tuple[str, str], run_id: str, **sides: Any) -> Any:
    return openlineage(run_event("COMPLETE", 1, run_id, job=job, **sides))


def _flags(run_id: str) -> dict[str, bool]:
    runs = Run.objects.filter(run_id_text=run_id)
    return dict(runs.values_list("job__name", "shares_run_id"))


def _age(job_name: str) -> None:
    """The job's runs and events as retention finds them 40 days on."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ingest_event SET received_at = received_at - interval '40 days'"
            " WHERE job_name = %s",
            [job_name],
        )
        cursor.execute(
            "UPDATE catalog_run SET updated_at = updated_at - interval '40 days'"
            " WHERE job_id IN (SELECT id FROM catalog_job WHERE name = %s)",
            [job_name],
        )


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_retention_of_one_of_two_sharers_unflags_the_other(run_id: str, read_client) -> None:
    derive_events(store([_event(("ns", "old"), run_id), _event(("ns", "kept"), run_id)]))
    assert _flags(run_id) == {"old": True, "kept": True}
    _age("old")
    assert apply_retention(30).runs == 1
    assert _flags(run_id) == {"kept": False}
    # What reads the flag says so: the run detail and the event detail name no sharer.
    detail = read_client.get(f"/api/v1/runs/{run_id}").json()
    assert (detail["shares_run_id"], detail["same_run_id_runs"]) == (False, [])
    event = Event.objects.get(job_name="kept")
    assert read_client.get(f"/api/v1/events/{event.id}").json()["run_id_shared_with"] == []


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_retention_of_one_of_three_sharers_keeps_the_others_flagged(run_id: str) -> None:
    jobs = ("old", "kept", "also")
    derive_events(store([_event(("ns", name), run_id) for name in jobs]))
    _age("old")
    apply_retention(30)
    assert _flags(run_id) == {"kept": True, "also": True}


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_a_purged_namespaces_run_unflags_another_namespaces_sharer(run_id: str) -> None:
    derive_events(store([_event((GONE, "copy"), run_id), _event(("etl", "kept"), run_id)]))
    assert _flags(run_id) == {"copy": True, "kept": True}
    purge_namespace(GONE, by="test")
    assert _flags(run_id) == {"kept": False}


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_a_purge_leaves_two_other_sharers_flagged(run_id: str) -> None:
    jobs = [(GONE, "copy"), ("etl", "kept"), ("etl", "also")]
    derive_events(store([_event(job, run_id) for job in jobs]))
    purge_namespace(GONE, by="test")
    assert _flags(run_id) == {"kept": True, "also": True}


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_a_rebuilt_job_that_loses_its_run_unflags_the_sharer(run_id: str) -> None:
    """Job "report" (another namespace) read the purged namespace in its run of ``run_id``:
    that event goes, the job is rebuilt from the one it keeps (another runId), and the
    run it no longer has leaves job "kept"'s run alone."""
    derive_events(
        store(
            [
                _event(("etl", "report"), run_id, inputs=[dataset(GONE, "db.t")]),
                _event(("etl", "report"), "another-run"),
                _event(("etl", "kept"), run_id),
            ]
        )
    )
    assert _flags(run_id) == {"report": True, "kept": True}
    report = purge_namespace(GONE, by="test")
    assert report.rebuilt_jobs == 1
    assert _flags(run_id) == {"kept": False}
    assert _flags("another-run") == {"report": False}


def _waits_for_a_lock(done: threading.Event, *wait_events: str) -> bool:
    """Whether another backend comes to wait for a lock of one of ``wait_events`` (as
    pg_stat_activity names them) before ``done``."""
    while not done.is_set():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND wait_event = ANY(%s))",
                [list(wait_events)],
            )
            if cursor.fetchone()[0]:
                return True
        done.wait(0.05)
    return False


def _waits_for_an_advisory_lock(done: threading.Event) -> bool:
    return _waits_for_a_lock(done, "advisory")


def _waits_for_a_row_lock(done: threading.Event) -> bool:
    return _waits_for_a_lock(done, "transactionid", "tuple")


@pytest.mark.django_db(transaction=True)
def test_a_purge_waits_for_a_batch_holding_the_text_and_then_unflags() -> None:
    """A derivation batch of the text holds its lock and recomputes every run of it before
    its commit: the purge's deletion waits for it (the lock derivation waits for first,
    before anything is written), so it never unflags from a picture the batch changes."""
    derive_events(store([_event((GONE, "copy"), TEXT), _event(("etl", "kept"), TEXT)]))
    purged = threading.Event()

    def purge() -> None:
        try:
            purge_namespace(GONE, by="test")
            purged.set()
        finally:
            connection.close()

    purger = threading.Thread(target=purge)
    try:
        with run_texts_held([TEXT]):
            purger.start()
            assert _waits_for_an_advisory_lock(purged)  # the batch's, before it deletes
    finally:
        purger.join(20)
    assert purged.is_set()
    assert _flags(TEXT) == {"kept": False}


def test_the_migrations_function_unflags_what_past_deletions_left() -> None:
    """A store where runs were deleted before ADR 0202 (rows removed as retention removed
    them, flags untouched): the runs their runIds kept alone are unflagged, a runId two
    jobs still keep is not, a second pass (a resumed migration) changes nothing."""
    derive_events(
        store(
            [
                *(_event(("ns", name), TEXT) for name in ("gone", "alone")),
                *(_event(("ns", name), UUID) for name in ("gone", "alone")),
                *(_event(("ns", name), "still-shared") for name in ("gone", "a", "b")),
            ]
        )
    )
    Run.objects.filter(job__name="gone").delete()
    assert _flags(TEXT) == _flags(UUID) == {"alone": True}
    assert unflag_all_left_alone(batch=1) == 2
    assert _flags(TEXT) == _flags(UUID) == {"alone": False}
    assert _flags("still-shared") == {"a": True, "b": True}
    assert unflag_all_left_alone(batch=1) == 0


@pytest.mark.django_db(transaction=True)
def test_the_migrations_function_leaves_a_text_a_batch_holds() -> None:
    """A derivation batch of the text recomputes all its runs before its commit: the
    migration passes it over rather than wait, and unflags it once it is free."""
    derive_events(store([_event(("ns", name), TEXT) for name in ("gone", "alone")]))
    Run.objects.filter(job__name="gone").delete()
    with run_texts_held([TEXT]):
        assert unflag_all_left_alone() == 0
    assert unflag_all_left_alone() == 1
    assert _flags(TEXT) == {"alone": False}


@pytest.mark.django_db(transaction=True)
def test_a_purge_waiting_for_a_runid_a_batch_holds_holds_none_meanwhile() -> None:
    """A derivation batch holds the runIds it got without waiting (its free part) and then
    waits for those another transaction held (``lock_held_runs``). The purge waited for its
    sorted list holding the first ones: a batch that got text B and waited for text A while
    the purge held A and waited for B was a deadlock, PostgreSQL ended the purge, and the
    command stopped in a traceback half way, the namespace's events marked and its runs
    still there (seen with a stream of events and a Celery worker, ADR 0209). Now it holds
    none of them while it waits: the batch takes A at once, and the purge then finishes."""
    from catalog.services.derivation.locks import lock_run_texts, try_lock_run_texts

    first, second = "scheduled__2026-01-01", "scheduled__2026-01-02"
    derive_events(
        store(
            [
                _event(job, text)
                for job in ((GONE, "copy"), ("etl", "kept"))
                for text in (first, second)
            ]
        )
    )
    at_once: list[bool] = []

    def batch(cursor: Any, holding: threading.Event, go: threading.Event) -> None:
        assert try_lock_run_texts([second]) == [second]
        holding.set()
        go.wait(20)
        # Free at once: the purge, waiting for ``second``, holds nothing meanwhile.
        at_once.append(try_lock_run_texts([first]) == [first])
        lock_run_texts([first])  # the contended part waits for what was held

    # The purge holds ``first`` and waits for ``second``.
    _purge_beside(batch, _waits_for_an_advisory_lock)
    assert at_once == [True]
    assert _flags(first) == _flags(second) == {"kept": False}
    assert not Event.objects.filter(job_namespace=GONE).exists()


@pytest.mark.django_db(transaction=True)
def test_a_purge_ended_by_a_deadlock_on_a_child_runs_row_is_done_again() -> None:
    """The purge's run deletion sets the parent link of another namespace's child run to
    NULL, so it waits for that run's row, which a batch deriving the child holds (its free
    part) while it waits for the purged run's runId, which the purge holds: a deadlock
    PostgreSQL ends (the purge waited first). The purge's transaction is done again, as a
    derivation batch is (ADR 0209); before, the command stopped in a traceback."""
    from catalog.services.derivation.locks import lock_run_uuids, try_lock_run_uuids

    child_run = "1e9c6a0e-9a43-4c1f-8d2b-6f0c2a7b5e11"
    parent = {"run": {"runId": UUID}, "job": {"namespace": GONE, "name": "copy"}}
    child = run_event("COMPLETE", 1, child_run, job=("etl", "child"), run_facets={"parent": parent})
    derive_events(store([_event((GONE, "copy"), UUID), openlineage(child)]))
    child_row = Run.objects.get(run_id_text=child_run)
    assert child_row.parent_run is not None

    def batch(cursor: Any, holding: threading.Event, go: threading.Event) -> None:
        assert try_lock_run_uuids([child_row.run_uuid]) == [child_row.run_uuid]
        cursor.execute("SELECT id FROM catalog_run WHERE id = %s FOR NO KEY UPDATE", [child_row.id])
        holding.set()
        go.wait(20)
        lock_run_uuids([uuid.UUID(UUID)])  # the parent's runId, held by the purge

    # The purge holds the runId and waits for the row.
    _purge_beside(batch, _waits_for_a_row_lock)
    assert not Run.objects.filter(job__namespace=GONE).exists()
    assert Run.objects.get(id=child_row.id).parent_run is None


def _purge_beside(
    batch: Callable[[Any, threading.Event, threading.Event], None],
    purge_waits: Callable[[threading.Event], bool],
) -> None:
    """``purge_namespace(GONE)`` while ``batch`` runs in a transaction of its own thread,
    as a derivation batch: ``batch(cursor, holding, go)`` takes its locks, sets
    ``holding`` and waits for ``go``. The purge starts once the batch holds, must come to
    wait (``purge_waits``, given an event set when the purge is done), then the batch goes
    on; both must finish, the purge without an error. The batch's deadlock detector is
    later than the purge's: when there is a deadlock, the purge is the one PostgreSQL ends."""
    purged, holding, go, batch_done = (threading.Event() for _ in range(4))
    errors: list[BaseException] = []

    def batch_thread() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL deadlock_timeout = '30s'")
                batch(cursor, holding, go)
            batch_done.set()
        finally:
            connection.close()

    def purge() -> None:
        try:
            purge_namespace(GONE, by="test")
            purged.set()
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    batcher, purger = threading.Thread(target=batch_thread), threading.Thread(target=purge)
    batcher.start()
    try:
        assert holding.wait(10)
        purger.start()
        assert purge_waits(purged)
        go.set()
        purger.join(30)
    finally:
        go.set()
        batcher.join(30)
        purger.join(30)
    assert batch_done.is_set()
    assert errors == [] and purged.is_set()

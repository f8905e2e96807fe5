"""Retire and restore (ADR 0078): the services, revival by a later event, a rederive that
keeps the retirement, and a retirement racing a derivation batch."""

import threading
from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.db import connection

from catalog.models import Dataset, Job, Retirement
from catalog.services import retirement
from catalog.services.derivation import batch
from catalog.services.derive import derive_events, rederive
from catalog.services.retirement import Actor
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store


def _ingest(run_id: str, job: str = "load", seconds: float = 0) -> list[int]:
    event = run_event(
        "COMPLETE",
        seconds,
        run_id,
        job=("ns", job),
        inputs=[dataset("pg://db", "raw.orders")],
        outputs=[dataset("pg://db", "mart.orders")],
    )
    return store([openlineage(event)])


def _received_after(event_ids: list[int], row: Retirement) -> None:
    """As if sent by a later request (in a test's one transaction, now() never moves)."""
    later = row.retired_at + timedelta(milliseconds=1)
    Event.objects.filter(pk__in=event_ids).update(received_at=later)


@pytest.fixture
def steward(db):
    return get_user_model().objects.create_user("stew", is_staff=True)


@pytest.fixture
def derived(db):
    derive_events(_ingest("00000000-0000-0000-0000-000000000001"))
    return Job.objects.get(name="load"), Dataset.objects.get(name="mart.orders")


def test_retire_hides_and_restore_shows_both_logged(derived, steward) -> None:
    job, target = derived
    actor = Actor.of(steward)
    assert retirement.retire(target, actor, "dropped in the warehouse") is not None
    assert retirement.retire(target, actor, "twice") is None  # idempotent
    assert not Dataset.objects.current().filter(pk=target.pk).exists()
    assert list(Dataset.objects.retired()) == [target]
    assert Job.objects.current().filter(pk=job.pk).exists()
    row = retirement.active_retirement(target)
    assert (row.retired_by, row.reason) == ("stew", "dropped in the warehouse")
    assert retirement.restore(target, actor)
    assert not retirement.restore(target, actor)
    assert Dataset.objects.current().filter(pk=target.pk).exists()
    messages = LogEntry.objects.filter(object_id=str(target.pk)).values_list(
        "change_message", flat=True
    )
    assert sorted("restored" in m for m in messages) == [False, True]


def test_namespace_retire_and_restore_are_set_based(derived, steward) -> None:
    job, _target = derived
    count = retirement.retire_namespace("pg://db", Actor.of(steward), "decommissioned")
    assert (count.datasets, count.jobs) == (2, 0)
    assert not Dataset.objects.current().exists()
    assert Job.objects.current().filter(pk=job.pk).exists()  # its namespace is "ns"
    assert retirement.retire_namespace("pg://db", Actor.of(steward)) is None
    assert retirement.restore_namespace("pg://db", Actor("token:ci")) == 3
    assert Dataset.objects.current().count() == 2


def test_a_namespace_retires_the_jobs_kept_under_its_spelling_as_sent(steward) -> None:
    """A job keeps its namespace as sent, where normalising would change it (a trailing
    slash, an upper-case scheme): retiring that namespace, as the admin's action does with
    the selected job's, retires the job, and a job event received later revives both."""
    event = run_event(
        "COMPLETE",
        0,
        "00000000-0000-0000-0000-000000000007",
        job=("Spark://Cluster-A/", "load"),
        outputs=[dataset("pg://db", "mart.orders")],
    )
    derive_events(store([openlineage(event)]))
    job = Job.objects.get()
    count = retirement.retire_namespace(job.namespace, Actor.of(steward))
    assert (count.datasets, count.jobs) == (0, 1)
    assert not Job.objects.current().exists()
    row = retirement.namespace_retirement(job.namespace)
    later = run_event(
        "COMPLETE", 60, "00000000-0000-0000-0000-000000000008", job=("Spark://Cluster-A/", "load")
    )
    revived_by = store([openlineage(later)])
    _received_after(revived_by, row)
    derive_events(revived_by)
    assert Job.objects.current().filter(pk=job.pk).exists()
    assert retirement.namespace_retirement(job.namespace) is None  # the namespace too


def test_a_namespace_an_event_revived_still_restores_what_it_retired(derived, steward) -> None:
    """restore_namespace works after an event revived the namespace's own row: what that
    event did not name is still retired, and is restored with it."""
    retirement.retire_namespace("pg://db", Actor.of(steward))
    event = run_event(
        "COMPLETE",
        60,
        "00000000-0000-0000-0000-000000000009",
        job=("ns", "other"),
        inputs=[dataset("pg://db", "raw.orders")],
    )
    revived_by = store([openlineage(event)])
    _received_after(revived_by, retirement.namespace_retirement("pg://db"))
    derive_events(revived_by)
    assert retirement.namespace_retirement("pg://db") is None  # revived by the event
    assert list(Dataset.objects.retired().values_list("name", flat=True)) == ["mart.orders"]
    assert retirement.restore_namespace("pg://db", Actor.of(steward)) == 1
    assert not Dataset.objects.retired().exists()


def test_an_event_received_after_the_retirement_revives_whatever_its_event_time(
    derived, steward
) -> None:
    job, _target = derived
    row = retirement.retire(job, Actor.of(steward), "switched off")
    # eventTime an hour *before* the first run: received later, so it counts.
    late = _ingest("00000000-0000-0000-0000-000000000002", seconds=-3600)
    _received_after(late, row)
    derive_events(late)
    row = Retirement.objects.get()
    assert row.restored_by == "event"
    assert row.revived_by_event_id == late[0]
    assert Job.objects.current().filter(pk=job.pk).exists()


def test_an_event_received_before_the_retirement_does_not_revive(derived, steward) -> None:
    _job, target = derived
    pending = _ingest("00000000-0000-0000-0000-000000000003", seconds=60)  # not derived yet
    retirement.retire(target, Actor.of(steward))  # received_at (now()) is before retired_at
    derive_events(pending)
    assert retirement.active_retirement(target) is not None


def test_rederive_keeps_what_was_retired_and_what_was_revived(derived, steward) -> None:
    job, target = derived
    row = retirement.retire(target, Actor.of(steward), "gone")
    retirement.retire(job, Actor.of(steward), "off")
    revived_by = _ingest("00000000-0000-0000-0000-000000000004", job="other")
    _received_after(revived_by, row)
    derive_events(revived_by)  # names both datasets: revives them, not the job "load"
    retirement.retire(Dataset.objects.get(name="raw.orders"), Actor.of(steward))
    rederive()
    assert not Job.objects.current().filter(name="load").exists()
    assert Dataset.objects.current().filter(name="mart.orders").exists()  # revived before
    assert not Dataset.objects.current().filter(name="raw.orders").exists()  # retired after


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first", ["retire", "derive"])
def test_a_retire_racing_a_batch_never_loses_the_later_event(first, monkeypatch) -> None:
    """Two connections: a batch that has written its rows and is about to revive, and a
    retirement. Whichever takes the lock first, the event received after the retirement
    (here: before it, with ``first == 'derive'``) decides as the rule says."""
    derive_events(_ingest("00000000-0000-0000-0000-000000000005"))
    job = Job.objects.get(name="load")
    stew = get_user_model().objects.create_user("stew", is_staff=True)
    if first == "retire":
        retirement.retire(job, Actor.of(stew))
    pending = _ingest("00000000-0000-0000-0000-000000000006", seconds=5)
    reached, go = threading.Event(), threading.Event()
    revive = batch.revive

    def revive_later(events):
        reached.set()
        assert go.wait(10)
        return revive(events)

    monkeypatch.setattr(batch, "revive", revive_later)
    errors: list[BaseException] = []

    def derive() -> None:
        try:
            batch.derive_event_ids(pending)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    worker = threading.Thread(target=derive)
    worker.start()
    assert reached.wait(10)
    retirer = None
    if first == "derive":  # the retirement starts while the batch holds its rows
        retirer = threading.Thread(
            target=lambda: (retirement.retire(job, Actor.of(stew)), connection.close())
        )
        retirer.start()
    go.set()
    worker.join(10)
    if retirer is not None:
        retirer.join(10)
    assert not errors, errors
    row = Retirement.objects.get()
    if first == "retire":  # received after the retirement: revived
        assert row.revived_by_event_id == pending[0]
    else:  # the retirement read its time after the batch committed: the event is older
        assert row.restored_at is None

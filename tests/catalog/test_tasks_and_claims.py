"""Enqueue after commit, the sweep, claims, poison events, retries, concurrency, query counts."""

import threading
import uuid

import pytest
from django.db import connection
from kombu.exceptions import OperationalError as BrokerError

from catalog import tasks
from catalog.models import LineageEdge, Run, RunState
from catalog.services import derive
from catalog.services.derive import derive_events, sweep_underived
from ingest import enqueue
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import (
    canonical_dump,
    corpus_records,
    each_in_a_thread,
    openlineage,
    store,
)


def _post(client, event: dict) -> None:
    response = client.post("/api/v1/lineage", event, content_type="application/json")
    assert response.status_code in (200, 201), response.content


@pytest.mark.django_db
def test_ingest_enqueues_the_derive_task_after_commit_and_running_it_twice_changes_nothing(
    ingest_client, monkeypatch, django_capture_on_commit_callbacks, no_task_waiting
) -> None:
    sent = []
    monkeypatch.setattr(
        enqueue.current_app, "send_task", lambda name, args: sent.append((name, args))
    )
    run_id = str(uuid.uuid4())
    with django_capture_on_commit_callbacks(execute=True):
        _post(
            ingest_client,
            run_event(
                "COMPLETE",
                1,
                run_id,
                outputs=[dataset("s3://b", "o")],
                inputs=[dataset("s3://b", "i")],
            ),
        )
    assert enqueue.wait_until_published()
    assert [name for name, _ in sent] == ["catalog.derive_events"]
    # The task registered under the name ingest publishes, run here (same transaction).
    from celery import current_app

    assert current_app.tasks[sent[0][0]].apply(args=sent[0][1]).get() == 1
    assert Run.objects.get(run_uuid=run_id).state == RunState.COMPLETE
    before = canonical_dump()
    assert tasks.derive_events.apply(args=sent[0][1]).get() == 0  # already derived: skipped
    Event.objects.update(derivation_status="pending")  # a redelivery after a lost ack
    assert tasks.derive_events.apply(args=sent[0][1]).get() == 1
    assert canonical_dump() == before


@pytest.mark.django_db
def test_the_one_waiting_task_derives_every_event_committed_before_it_started(
    ingest_client, monkeypatch, django_capture_on_commit_callbacks, no_task_waiting
) -> None:
    sent = []
    monkeypatch.setattr(enqueue.current_app, "send_task", lambda name, args: sent.append(args))
    for second in range(6):
        with django_capture_on_commit_callbacks(execute=True):
            _post(ingest_client, run_event("COMPLETE", second, str(uuid.uuid4())))
        assert enqueue.wait_until_published()  # each event its own burst
    assert len(sent) == 1  # the later bursts found a task waiting
    assert tasks.derive_events.apply(args=sent[0]).get() == 6
    assert not Event.objects.filter(derivation_status="pending").exists()
    assert Run.objects.count() == 6
    # The task said it started: what comes next is published again.
    with django_capture_on_commit_callbacks(execute=True):
        _post(ingest_client, run_event("COMPLETE", 7, str(uuid.uuid4())))
    assert enqueue.wait_until_published()
    assert len(sent) == 2


@pytest.mark.django_db
def test_a_backlog_beyond_the_task_budget_gets_another_task(monkeypatch, no_task_waiting) -> None:
    store([openlineage(run_event("COMPLETE", 1, str(uuid.uuid4()))) for _ in range(5)])
    sent = []
    monkeypatch.setattr(enqueue.current_app, "send_task", lambda name, args: sent.append(args))
    drain = derive.drain_pending
    # A budget that ends after the first batch of two: three events are left.
    monkeypatch.setattr(derive, "drain_pending", lambda: drain(0, 2))
    assert tasks.derive_events.apply(args=[[]]).get() == 2
    assert sent == [[[]]]  # another task, which drains the rest
    monkeypatch.setattr(derive, "drain_pending", drain)
    assert tasks.derive_events.apply(args=sent[0]).get() == 3
    assert sent == [[[]]]  # nothing left: no further task
    assert not Event.objects.filter(derivation_status="pending").exists()


@pytest.mark.django_db
def test_with_the_broker_down_ingest_answers_and_the_sweep_derives_everything_once(
    ingest_client, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    def broker_down(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(enqueue.current_app, "send_task", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        for second in range(5):
            _post(ingest_client, run_event("COMPLETE", second, str(uuid.uuid4())))
    assert Event.objects.filter(derivation_status="pending").count() == 5
    assert sweep_underived(older_than_seconds=3600).claimed == 0  # too young for the sweep
    result = tasks.sweep_underived.apply(kwargs={"older_than_seconds": 0}).get()
    assert result == 5
    assert sweep_underived(older_than_seconds=0).claimed == 0  # none twice
    assert Run.objects.count() == 5


@pytest.mark.django_db
def test_poison_event_is_marked_failed_and_does_not_block_the_others() -> None:
    good = store([openlineage(run_event("COMPLETE", 1, str(uuid.uuid4()))) for _ in range(3)])
    poison = store([openlineage(run_event("COMPLETE", 2, str(uuid.uuid4())))])[0]
    # Real producers cannot get this past ingest validation; the log is what it is.
    Event.objects.filter(id=poison).update(payload={"run": {"runId": 7}, "job": {}})
    result = derive_events([*good, poison])
    assert (result.derived, result.failed) == (3, 1)
    failed = Event.objects.get(id=poison)
    assert failed.derivation_status == "failed" and "BadEvent" in failed.derivation_error
    assert Event.objects.filter(derivation_status="derived").count() == 3
    assert derive_events([poison]).claimed == 0  # not retried forever


@pytest.mark.django_db
def test_database_error_in_one_event_isolates_it_in_a_savepoint(monkeypatch, caplog) -> None:
    from catalog.services.derivation import batch

    ids = store([openlineage(run_event("COMPLETE", n, str(uuid.uuid4()))) for n in range(3)])
    real = batch.apply_facts

    def apply_facts(facts):
        if any(fact.first_event and fact.first_event.second == 1 for fact in facts.runs.values()):
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1/0")
        return real(facts)

    monkeypatch.setattr(batch, "apply_facts", apply_facts)
    result = derive_events(ids)
    assert (result.derived, result.failed) == (2, 1)
    assert "DataError" in next(iter(result.errors.values()))
    # The batch's failure says what failed, by kind, before its events are tried alone.
    assert "derive_batch_failed events=3 error=DataError sqlstate=22012" in caplog.text


@pytest.mark.django_db
def test_derivation_batch_query_count_does_not_grow_with_the_batch(
    django_assert_max_num_queries,
) -> None:
    def batch(size: int, first: int = 0) -> list[int]:
        return store(
            [
                openlineage(
                    run_event(
                        "COMPLETE",
                        n,
                        str(uuid.uuid4()),
                        job=("ns", f"job{first}"),  # each batch names a new job
                        inputs=[dataset("s3://in", f"t{n}")],
                        outputs=[dataset("s3://out", f"t{n}")],
                    )
                )
                for n in range(first, first + size)
            ]
        )

    small, large = batch(5), batch(200, first=5)
    # no commit flush, constraints immediate and deferred again; claim; rules; jobs read
    # ids, insert the new, read theirs, later lock+update; runId try-lock; runs
    # insert+lock+update; aliases the same as jobs, later lock; datasets lock+insert+update;
    # alias update; run/job/event dataset upserts; run edges; edge upsert; edge-run
    # delete+insert; edge aggregate+cleanup; column keys; job edges: run io, upsert, run
    # delete+insert, fold; mark derived (+ savepoint create/release); the ids remembered
    # by a full rederive for the new jobs, the runs and the new datasets (ADR 0077: one
    # indexed lookup each, on a table that is empty but while a rederive runs); the
    # revival of what the events name and was retired before they came (ADR 0078); the
    # steward's tags and owners of the batch's datasets and of its jobs (ADR 0083: one
    # indexed lookup each, after the rows' locks, never in the statement that waits for
    # them: tests/catalog/test_label_races.py); the change records of the batch's runs and edges
    # (ADR 0088: the touched runs with their neighbours, found from where they start and
    # where they started before the batch, the edges' first runs and stopping runs, their
    # events, the stored changes, change_log's key try-locks and its insert), the webhook
    # ledger and the active subscriptions (ADR 0086), and the edges' targets and their
    # stored changes for edge_added: 12 more than before, none per event.
    with django_assert_max_num_queries(59) as small_queries:
        derive_events(small)
    with django_assert_max_num_queries(59) as large_queries:
        derive_events(large)
    assert len(large_queries) == len(small_queries)
    assert LineageEdge.objects.count() == 205


def derive_each_in_its_own_thread(event_ids: list[int]) -> None:
    """Derive each event in a thread of its own, all let go at once (as concurrent workers
    would); fails with whatever any of them raised."""
    barrier = threading.Barrier(len(event_ids))

    def work(event_id: int) -> None:
        barrier.wait()
        derive_events([event_id])

    each_in_a_thread(work, event_ids)


@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_on_the_same_run_and_datasets_raise_no_integrity_error() -> None:
    for round_ in range(3):
        run_id = str(uuid.uuid4())
        symlink = {
            "identifiers": [
                {"namespace": "hive://m:9083", "name": f"db.t{round_}", "type": "TABLE"}
            ]
        }
        events = [
            openlineage(
                run_event(
                    kind,
                    second,
                    run_id,
                    inputs=[dataset("s3://shared", "in")],
                    outputs=[
                        dataset(
                            "s3://shared",
                            f"out{round_}",
                            symlinks={"_producer": "p", "_schemaURL": "s", **symlink},
                        )
                    ],
                )
            )
            for second, kind in enumerate(["START", "RUNNING", "RUNNING", "COMPLETE"] * 2)
        ]
        ids = store(events)
        derive_each_in_its_own_thread(ids)
        assert Run.objects.get(run_uuid=run_id).state == RunState.COMPLETE
    left = Event.objects.exclude(derivation_status="derived")
    assert not list(left.values_list("id", "derivation_status", "derivation_error"))
    assert LineageEdge.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_two_workers_deriving_two_jobs_with_one_run_id_both_flag_it() -> None:
    """The advisory lock per runId (ADR 0028): neither worker can miss the other's run."""
    for _ in range(3):
        run_id = str(uuid.uuid4())
        ids = store(
            [
                openlineage(run_event("COMPLETE", 1, run_id, job=("ns", name)))
                for name in ("first", "second")
            ]
        )
        derive_each_in_its_own_thread(ids)
        runs = Run.objects.filter(run_uuid=run_id)
        assert sorted(runs.values_list("job__name", "shares_run_id")) == [
            ("first", True),
            ("second", True),
        ]


@pytest.mark.django_db
def test_corpus_in_one_batch_equals_one_event_at_a_time(corpus) -> None:
    ids = store(corpus_records(corpus))
    derive_events(ids)
    at_once = canonical_dump()
    Event.objects.update(derivation_status="pending")
    from catalog.services.derive import rederive

    rederive(batch_size=1)
    assert canonical_dump() == at_once

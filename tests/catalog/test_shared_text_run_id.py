"""``shares_run_id`` on a text runId several jobs sent (ADR 0028, ADR 0201).

A text runId (Airflow's ``scheduled__...``) is keyed per job (uuid5 over the job and the
text), so two jobs' runs of it have two run_uuids; the per-uuid recompute never saw them
together while the run detail's ``same_run_id_runs`` listed both. The runs are derived
from real events, in one batch, in two in either order, and in two concurrent
transactions; a placeholder (a child's parent facet names the runId) is never flagged.
"""

import contextlib
import threading
from typing import Any

import pytest
from django.db import connection, transaction

from catalog.models import Run
from catalog.reads.runs import shown_events
from catalog.services.derivation import run_conflicts
from catalog.services.derivation.run_conflicts import mark_all_shared_run_texts
from catalog.services.derive import derive_events
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.conftest import facet, run_event
from tests.catalog.helpers import each_in_a_thread, openlineage, run_texts_held, store

TEXT = "scheduled__2026-01-01T00:00:00+00:00"


def _event(name: str, run_id: str = TEXT, parent: str | None = None) -> Any:
    facets = None
    if parent is not None:
        facets = {"parent": facet(run={"runId": parent}, job={"namespace": "ns", "name": "dag"})}
    return openlineage(run_event("COMPLETE", 1, run_id, job=("ns", name), run_facets=facets))


def _flags(run_id: str = TEXT) -> list[tuple[str, bool, bool]]:
    runs = Run.objects.filter(run_id_text=run_id).order_by("job__name")
    return list(runs.values_list("job__name", "is_placeholder", "shares_run_id"))


@pytest.mark.django_db
def test_two_jobs_in_one_batch_are_both_flagged_and_a_placeholder_is_not() -> None:
    # "child" names the runId as its parent's (job "dag"): a placeholder run of it.
    derive_events(store([_event("first"), _event("second"), _event("child", "c1", TEXT)]))
    assert _flags() == [("dag", True, False), ("first", False, True), ("second", False, True)]
    assert Run.objects.get(run_id_text="c1").shares_run_id is False


@pytest.mark.django_db
@pytest.mark.parametrize("order", [("first", "second"), ("second", "first")])
def test_two_jobs_in_two_batches_in_either_order_are_both_flagged(order) -> None:
    derive_events(store([_event(order[0])]))
    assert _flags() == [(order[0], False, False)]  # alone: not shared
    derive_events(store([_event(order[1])]))
    assert _flags() == [("first", False, True), ("second", False, True)]


@pytest.mark.django_db
def test_a_placeholder_becoming_a_jobs_own_run_is_flagged_then() -> None:
    """Job "dag"'s run of the text is first a placeholder (not counted), then its own."""
    derive_events(store([_event("first"), _event("child", "c1", TEXT)]))
    assert _flags() == [("dag", True, False), ("first", False, False)]
    derive_events(store([_event("dag")]))
    assert _flags() == [("dag", False, True), ("first", False, True)]


@pytest.mark.django_db
def test_an_events_detail_names_the_other_jobs_that_sent_its_text_run_id(read_client) -> None:
    """``/events/{id}``'s ``run_id_shared_with`` found sharers by the run's UUID, which a
    text runId's runs do not share: it listed none."""
    derive_events(store([_event("first"), _event("second"), _event("third", "other")]))
    event = Event.objects.get(job_name="first")
    detail = read_client.get(f"/api/v1/events/{event.id}").json()
    assert [job["name"] for job in detail["run_id_shared_with"]] == ["second"]


@pytest.mark.django_db
def test_a_shared_text_runs_detail_shows_its_own_jobs_events_only() -> None:
    """The run detail's events are filtered to the run's job when the flag is set: with it
    unset, the first job's run showed the second job's event as its own."""
    derive_events(store([_event("first"), _event("second")]))
    run = Run.objects.select_related("job").get(run_id_text=TEXT, job__name="first")
    assert [event.job_name for event in shown_events(run, 10)] == ["first"]


@pytest.mark.django_db
def test_a_uuid_run_id_keeps_its_flags_beside_a_text_one() -> None:
    run_uuid = "0b1f3c1e-6a8e-4c7b-9d7e-2f1a3b4c5d6e"
    derive_events(store([_event("first", run_uuid), _event("second", run_uuid), _event("x")]))
    assert _flags(run_uuid) == [("first", False, True), ("second", False, True)]
    assert _flags() == [("x", False, False)]


def _derive_each_in_its_own_transaction(event_ids: list[int]) -> None:
    """Each event derived in a thread, connection and transaction of its own, held open
    until both have derived their run (a barrier before the commit): without a lock each
    sees only its own run."""
    derived = threading.Barrier(len(event_ids), timeout=2)

    def work(event_id: int) -> None:
        with transaction.atomic():
            derive_events([event_id])
            # Broken when the other waits on our lock: it cannot reach the barrier.
            with contextlib.suppress(threading.BrokenBarrierError):
                derived.wait()

    each_in_a_thread(work, event_ids)


@pytest.mark.django_db(transaction=True)
def test_two_transactions_deriving_the_two_jobs_at_once_both_flag_them() -> None:
    for round_ in range(2):
        run_id = f"{TEXT}#{round_}"
        events = [_event("first", run_id), _event("second", run_id)]
        _derive_each_in_its_own_transaction(store(events))
        assert _flags(run_id) == [("first", False, True), ("second", False, True)]


@pytest.mark.django_db
def test_the_migrations_function_flags_a_store_derived_before() -> None:
    """A store derived before the fix: its text sharers unflagged (as the old code left
    them), a UUID's sharers flagged; the function flags the former, leaves the latter,
    and a second pass (a resumed migration) changes nothing."""
    run_uuid = "0b1f3c1e-6a8e-4c7b-9d7e-2f1a3b4c5d6e"
    derive_events(
        store(
            [
                *(_event(name) for name in ("first", "second", "third")),
                _event("child", "c1", TEXT),
                _event("alone", "lonely__text"),
                _event("u1", run_uuid),
                _event("u2", run_uuid),
            ]
        )
    )
    Run.objects.filter(run_id_text=TEXT).update(shares_run_id=False)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_run")
    assert mark_all_shared_run_texts(batch=2) == 3
    assert _flags() == [
        ("dag", True, False),
        ("first", False, True),
        ("second", False, True),
        ("third", False, True),
    ]
    assert _flags("lonely__text") == [("alone", False, False)]
    assert _flags(run_uuid) == [("u1", False, True), ("u2", False, True)]
    assert mark_all_shared_run_texts(batch=2) == 0


@pytest.mark.django_db(transaction=True)
def test_the_migration_stopped_half_way_keeps_its_spans_and_finishes_when_run_again(
    monkeypatch,
) -> None:
    """Each span commits on its own: a migration that fails in its second span keeps the
    first span's flags, and run again flags the rest (the module's "resumes")."""
    derive_events(store([_event("a1", "text-a"), _event("a2", "text-a")]))
    derive_events(store([_event("b1", "text-b"), _event("b2", "text-b")]))
    Run.objects.update(shares_run_id=False)  # as the code before ADR 0201 left them
    marked = run_conflicts.mark_shared_run_texts
    calls: list[list[str]] = []

    def second_span_fails(texts: list[str]) -> int:
        calls.append(texts)
        if len(calls) == 2:
            raise RuntimeError("the migration's process stopped")
        return marked(texts)

    monkeypatch.setattr(run_conflicts, "mark_shared_run_texts", second_span_fails)
    with pytest.raises(RuntimeError):
        mark_all_shared_run_texts(batch=2)
    assert calls == [["text-a"], ["text-b"]]
    assert _flags("text-a") == [("a1", False, True), ("a2", False, True)]
    assert _flags("text-b") == [("b1", False, False), ("b2", False, False)]
    monkeypatch.undo()
    assert mark_all_shared_run_texts(batch=2) == 2
    assert _flags("text-b") == [("b1", False, True), ("b2", False, True)]


@pytest.mark.django_db(transaction=True)
def test_retention_leaves_a_run_whose_text_a_derivation_batch_holds() -> None:
    """A batch deriving a text runId holds the text's lock and recomputes the flags of all
    its runs: retention skips a run of the text meanwhile (as it skips a runId's run a
    batch holds), so the batch never waits for retention's row lock."""
    derive_events(store([_event("first"), _event("second")]))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE ingest_event SET received_at = received_at - interval '40 days'")
        cursor.execute("UPDATE catalog_run SET updated_at = updated_at - interval '40 days'")
    with run_texts_held([TEXT]):  # what a derivation batch of the text holds
        apply_retention(30)
        assert Run.objects.filter(run_id_text=TEXT).count() == 2
    apply_retention(30)
    assert not Run.objects.filter(run_id_text=TEXT).exists()

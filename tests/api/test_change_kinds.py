"""Issue 40 item 3 (ADR 0088): a new upstream edge, an edge no longer current, a run that
failed after a success, a dataset retired and brought back, on the same change list. Each
derived the same whatever the order, batching or a rederive, with when and the evidence.
End to end: ingest, derive, the API and the admin."""

import uuid
from datetime import timedelta

import pytest

from catalog.models import Dataset, DatasetChange, Job
from catalog.services.derivation import change_log
from catalog.services.derive import derive_events, rederive
from catalog.services.retirement import Actor, restore, retire
from ingest.models import Event
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
LOAD = ("etl", "load")
RUNS = [str(uuid.UUID(int=n)) for n in range(700, 710)]


def load(event_type: str, seconds: int, run: int, *sources: str) -> dict:
    inputs = [dataset(NS, source) for source in sources]
    return run_event(event_type, seconds, RUNS[run], LOAD, inputs, [dataset(NS, "out")])


# A reads a; B reads a and b (b -> out is new); C reads b only (a -> out stops being
# current); D fails after C succeeded; E fails after D failed (not a change).
EVENTS = [
    load("COMPLETE", 0, 0, "a"),
    load("COMPLETE", 100, 1, "a", "b"),
    load("COMPLETE", 200, 2, "b"),
    load("FAIL", 300, 3, "b"),
    load("FAIL", 400, 4, "b"),
]


def event_of(run: int) -> int:
    return Event.objects.get(run_id=RUNS[run]).pk


def changes() -> set[tuple]:
    """Each change by what it names and its evidence, ids read as names."""
    rows = DatasetChange.objects.select_related("dataset", "source", "job")
    return {
        (
            c.kind,
            c.dataset.name if c.dataset else None,
            c.source.name if c.source else None,
            c.job.name if c.job else None,
            c.changed_at.isoformat(),
            c.run_id,
            c.previous_run_id,
            c.event_id,
        )
        for c in rows
    }


def expected() -> set[tuple]:
    return {
        ("edge_added", "out", "b", "load", "2026-01-01T12:01:40+00:00", RUNS[1], "", event_of(1)),
        (
            "edge_stopped",
            "out",
            "a",
            "load",
            "2026-01-01T12:03:20+00:00",
            RUNS[2],
            RUNS[1],
            event_of(2),
        ),
        (
            "run_failed",
            None,
            None,
            "load",
            "2026-01-01T12:05:00+00:00",
            RUNS[3],
            RUNS[2],
            event_of(3),
        ),
    }


ORDERS = [(0, 1, 2, 3, 4), (4, 3, 2, 1, 0), (2, 0, 4, 1, 3), (3, 1, 4, 0, 2), (1, 3, 0, 2, 4)]


@pytest.mark.parametrize("order", ORDERS)
def test_lineage_and_run_changes_are_the_same_in_any_order(order) -> None:
    derive(*(EVENTS[index] for index in order))
    assert changes() == expected()


def test_one_batch_a_repeat_and_a_rederive_record_nothing_twice() -> None:
    derive_events(store([openlineage(event) for event in reversed(EVENTS)]))
    assert changes() == expected()
    ids = set(DatasetChange.objects.values_list("id", flat=True))
    derive(load("COMPLETE", 200, 2, "b"))  # C again (a duplicate): nothing new, same rows
    assert set(DatasetChange.objects.values_list("id", flat=True)) == ids
    rederive()
    assert changes() == expected()


def test_a_run_placed_between_two_others_moves_the_changes_it_sits_between() -> None:
    """A late run of the job between C and D that fails: D no longer failed after a
    success (its previous run is the late one, a failure); the late one did."""
    derive(*EVENTS)
    derive(load("FAIL", 250, 5, "b"))
    kinds = {(c[0], c[5], c[6]) for c in changes() if c[0] == "run_failed"}
    assert kinds == {("run_failed", RUNS[5], RUNS[2])}


def test_a_run_moved_back_by_its_late_start_recomputes_the_run_that_followed_it() -> None:
    """M, known by its COMPLETE only, sits between X and Y; its START, last to arrive, puts
    it before both. Y, which followed it and which no change named, now follows X, and X's
    a -> out is stopped by Y; the change M had made of it (X then M) is withdrawn."""
    x, m, y = (
        load("COMPLETE", 100, 5, "a", "b"),
        load("COMPLETE", 150, 6, "b"),
        load("COMPLETE", 200, 7, "b"),
    )
    derive(x, m, y)
    stopped = {(c[2], c[5], c[6]) for c in changes() if c[0] == "edge_stopped"}
    assert stopped == {("a", RUNS[6], RUNS[5])}  # the step X -> M
    derive(load("START", 50, 6, "b"))
    after = changes()
    assert {(c[2], c[5], c[6]) for c in after if c[0] == "edge_stopped"} == {
        ("a", RUNS[7], RUNS[5])  # the step X -> Y
    }
    rederive()  # the same events in one batch, in order: the same changes
    assert changes() == after


def test_record_answers_only_the_new_rows() -> None:
    derive(*EVENTS)
    stored = list(DatasetChange.objects.all())
    for row in stored:
        row.pk = None
    assert change_log.record(stored) == []


def test_a_retired_dataset_and_its_revival_are_changes() -> None:
    derive(*EVENTS)
    out = Dataset.objects.for_alias(NS, "out").get()
    retirement = retire(out, Actor("steward"), reason="replaced by out_v2")
    assert retirement is not None
    revived = store([openlineage(load("COMPLETE", 500, 6, "b"))])[0]
    # Received after the retirement (in a test's one transaction, now() never moves).
    later = retirement.retired_at + timedelta(milliseconds=1)
    Event.objects.filter(pk=revived).update(received_at=later)
    derive_events([revived])  # revives out
    lifecycle = {
        (c.kind, c.event_id, c.detail)
        for c in DatasetChange.objects.filter(dataset=out, kind__startswith="dataset_")
    }
    assert lifecycle == {
        ("dataset_retired", None, "retired by steward: replaced by out_v2"),
        ("dataset_restored", revived, f"revived by event {revived}"),
    }
    retire(out, Actor("token:ops"))
    restore(out, Actor("token:ops"))
    assert DatasetChange.objects.filter(dataset=out, kind__startswith="dataset_").count() == 4
    before = {(c.kind, c.changed_at, c.detail) for c in DatasetChange.objects.filter(dataset=out)}
    rederive()  # retirements are kept; their changes are recorded again
    after = {(c.kind, c.changed_at, c.detail) for c in DatasetChange.objects.filter(dataset=out)}
    assert after == before


def listed(api, **params: str) -> list[dict]:
    response = api.get("/api/v1/changes", params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_the_list_names_each_kind_and_filters_by_dataset_and_job(api) -> None:
    derive(*EVENTS)
    out = Dataset.objects.for_alias(NS, "out").get().id
    source_a = Dataset.objects.for_alias(NS, "a").get().id
    job = Job.objects.get(name="load").id
    items = {item["kind"]: item for item in listed(api)}
    assert set(items) == {"edge_added", "edge_stopped", "run_failed"}
    stopped = items["edge_stopped"]
    assert stopped["dataset"] == f"dataset:{out}" and stopped["name"] == "out"
    assert stopped["upstream"] == {"id": f"dataset:{source_a}", "namespace": NS, "name": "a"}
    assert stopped["job"] == {"id": f"job:{job}", "namespace": "etl", "name": "load"}
    assert (stopped["run_id"], stopped["previous_run_id"]) == (RUNS[2], RUNS[1])
    failed = items["run_failed"]
    assert failed["dataset"] is None and (failed["namespace"], failed["name"]) == ("etl", "load")
    assert failed["event_id"] == event_of(3)
    assert {item["kind"] for item in listed(api, job=str(job))} == set(items)
    assert {item["kind"] for item in listed(api, dataset=str(source_a))} == {"edge_stopped"}
    assert {item["kind"] for item in listed(api, namespace="etl")} == {"run_failed"}
    assert {item["kind"] for item in listed(api, kind="edge_added,run_failed")} == {
        "edge_added",
        "run_failed",
    }
    assert api.get("/api/v1/changes", {"job": "x"}).status_code == 400


def test_the_list_queries_are_pinned(api, django_assert_num_queries) -> None:
    derive(*EVENTS)
    out = Dataset.objects.for_alias(NS, "out").get()
    retire(out, Actor("token:ops"))
    # One query for the page with everything it names (alias, dataset, source, job
    # joined); no schema change on it, so no breaking query.
    with django_assert_num_queries(1):
        assert len(listed(api)) == 4

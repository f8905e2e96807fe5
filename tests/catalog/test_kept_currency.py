"""The job edges' figures derivation keeps for the graph (ADR 0138): each edge's currency and
last run's UUID, each job's reference run, kept right by every path that changes them.

Every check reads the rule itself beside what is kept (``helpers.stale_kept_figures``:
currency's reference run and edge test, the last run's UUID by its key), and the graph's
own statement, which reads the kept columns, beside currency's read-time statement.
"""

import itertools
import uuid

import pytest
from django.db import connection

from catalog.lineage import currency, job_edges
from catalog.models import Job, JobLineageEdge, JobReference, Run
from catalog.services.derive import derive_events, rederive
from catalog.services.retention import apply_retention
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, stale_kept_figures, store

pytestmark = pytest.mark.django_db

FIRST, SECOND = str(uuid.UUID(int=11)), str(uuid.UUID(int=12))


def _events(second_state: str = "COMPLETE") -> list:
    """Two runs of one job: the first read ``a`` and wrote ``b``, the second (started
    later) read ``a`` and wrote ``c``."""
    return [
        run_event("START", 0, FIRST, inputs=[dataset("s3://x", "a")]),
        run_event("COMPLETE", 30, FIRST, outputs=[dataset("s3://x", "b")]),
        run_event("START", 100, SECOND, inputs=[dataset("s3://x", "a")]),
        run_event(second_state, 130, SECOND, outputs=[dataset("s3://x", "c")]),
    ]


def _derive(events: list) -> list[int]:
    ids = store([openlineage(event) for event in events])
    assert derive_events(ids).failed == 0
    return ids


def _kept() -> dict[tuple[str, str], bool | None]:
    """(direction, dataset name) → the edge's kept currency."""
    return {
        (edge.direction, edge.dataset.name): edge.current
        for edge in JobLineageEdge.objects.select_related("dataset")
    }


def _read_as_the_graph_reads() -> None:
    """The graph's job-edge statement (kept columns) gives currency's read-time answer."""
    keys = {(e.direction, e.dataset_id, e.job_id) for e in JobLineageEdge.objects.all()}
    rows = job_edges.job_edges(keys, None, None, retired=False)
    expected = currency.current_job_edges({row[0]: row[1] for row in rows})
    assert {row[0] for row in rows if row[10]} == expected
    for row in rows:
        edge = JobLineageEdge.objects.select_related("last_run").get(id=row[0])
        assert row[8] == (edge.last_run.run_uuid if edge.last_run else None)


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_any_order_of_the_runs_events_keeps_the_same_currency(order):
    """A newer run first, an older one arriving late, each event its own batch: the same
    kept answers, and they are the rule's: ``c`` (the newest write's output) and ``a``
    are current, ``b`` (only the older run's) is not."""
    events = _events()
    for index in order:
        _derive([events[index]])
    assert stale_kept_figures() == []
    assert _kept() == {("input", "a"): True, ("output", "b"): False, ("output", "c"): True}
    _read_as_the_graph_reads()


def test_a_run_that_fails_later_gives_the_reference_back_to_the_last_write():
    """The second run STARTs (the newest run, no write yet: the first run is the reference),
    then FAILs: still the first run's edges are current, kept through both batches."""
    events = _events("FAIL")
    _derive(events[:3])
    assert stale_kept_figures() == []
    assert _kept() == {("input", "a"): True, ("output", "b"): True}
    _derive(events[3:])
    assert stale_kept_figures() == []
    assert _kept() == {("input", "a"): True, ("output", "b"): True, ("output", "c"): False}
    _read_as_the_graph_reads()


def test_a_redelivered_batch_and_a_full_rederive_keep_the_same_answers():
    ids = _derive(_events())
    kept = _kept()
    with connection.cursor() as cursor:  # derived twice (a task run again)
        cursor.execute(
            "UPDATE ingest_event SET derivation_status = 'pending' WHERE id = ANY(%s)", [ids]
        )
    assert derive_events(ids).failed == 0
    assert _kept() == kept
    rederive()
    assert stale_kept_figures() == []
    assert _kept() == kept
    _read_as_the_graph_reads()


def test_retention_removing_the_reference_run_keeps_the_next_one():
    """Retention removes the newer run (the reference): the older one is the reference
    again, and the edges are re-kept in the same transaction."""
    _derive(_events())
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_run SET updated_at = updated_at - interval '40 days'"
            " WHERE run_uuid = %s",
            [SECOND],
        )
        cursor.execute(
            "UPDATE ingest_event SET received_at = received_at - interval '40 days'"
            " WHERE run_id = %s",
            [SECOND],
        )
    apply_retention(30)
    assert not Run.objects.filter(run_uuid=SECOND).exists()
    assert stale_kept_figures() == []
    job = Job.objects.get(name="job")
    kept = JobReference.objects.get(job=job)
    assert kept.run_id == Run.objects.get(run_uuid=FIRST).id
    kept = _kept()
    assert kept[("output", "b")] is True and kept[("input", "a")] is True
    _read_as_the_graph_reads()


def test_edges_not_kept_are_read_by_the_rule():
    """An edge whose figures were not kept (a row from before the migration) is read as
    currency computes it, and the next run of its job keeps it."""
    _derive(_events()[:2])
    JobLineageEdge.objects.update(current=None, last_run_uuid=None)
    JobReference.objects.all().delete()
    _read_as_the_graph_reads()
    _derive(_events()[2:])
    assert None not in _kept().values()
    assert stale_kept_figures() == []
    _read_as_the_graph_reads()


def test_a_stale_kept_answer_is_found():
    """The check itself: a kept answer that disagrees with the rule is reported."""
    _derive(_events())
    JobLineageEdge.objects.filter(dataset__name="b").update(current=True)
    assert [kind for kind, _ in stale_kept_figures()] == ["edge"]
    JobReference.objects.update(run_id=None)
    assert sorted(kind for kind, _ in stale_kept_figures()) == ["edge", "job"]

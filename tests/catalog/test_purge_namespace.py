"""``manage.py purge_namespace`` (ADR 0078): nothing of the namespace is left in any table of
the catalog or ingest; an event of another job that also names it goes, and that job is
rebuilt from the events it keeps."""

from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection, transaction

from catalog.models import (
    Dataset,
    Job,
    LineageEdge,
    NamespacePurge,
    RetainedEdge,
    Run,
    WebhookDelivery,
    WebhookSubscription,
)
from catalog.models.identity import stored_key
from catalog.services import purge, retirement
from catalog.services.derive import derive_events, derive_pending_batch, rederive
from catalog.services.purge import purge_namespace
from catalog.services.retention import apply_retention
from catalog.services.retirement import Actor
from ingest.models import DeadLetter, Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

GONE = "mysql://decommissioned:3306"


def _tables_naming(text: str) -> dict[str, int]:
    """Rows of every catalog and ingest table whose text (any column) contains ``text``."""
    found = {}
    with connection.cursor() as cursor:
        for label in ("catalog", "ingest"):
            for model in apps.get_app_config(label).get_models(include_auto_created=True):
                table = model._meta.db_table
                cursor.execute(
                    f"SELECT count(*) FROM {table} t WHERE position(%s in t::text) > 0", [text]
                )
                if count := cursor.fetchone()[0]:
                    found[table] = count
    return found


@pytest.fixture
def world() -> None:
    # Subscribed to every change: retiring db.a below enqueues a delivery naming it.
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/lineage")
    events = [
        # A job of the purged namespace, reading and writing there.
        run_event(
            "COMPLETE",
            0,
            "00000000-0000-0000-0000-00000000000a",
            job=(GONE, "copy"),
            inputs=[dataset(GONE, "db.a")],
            outputs=[dataset(GONE, "db.b")],
        ),
        # A job elsewhere that read from it once, and once from elsewhere only.
        run_event(
            "COMPLETE",
            10,
            "00000000-0000-0000-0000-00000000000b",
            job=("etl", "report"),
            inputs=[dataset(GONE, "db.b")],
            outputs=[dataset("pg://keep", "out")],
        ),
        run_event(
            "COMPLETE",
            20,
            "00000000-0000-0000-0000-00000000000c",
            job=("etl", "report"),
            inputs=[dataset("pg://keep", "src")],
            outputs=[dataset("pg://keep", "out")],
        ),
    ]
    derive_events(store([openlineage(event) for event in events]))
    retirement.retire(Dataset.objects.get(name="db.a"), Actor("stew"), "old")
    assert WebhookDelivery.objects.filter(kind="dataset_retired").exists()
    DeadLetter.objects.create(
        topic="ol",
        partition=0,
        offset=1,
        kind="openlineage",
        value=f'{{"namespace": "{GONE}", "broken'.encode(),
        value_size=40,
        reason_code="not_json",
        reason="truncated",
    )


def test_dry_run_counts_and_changes_nothing(world) -> None:
    before = _tables_naming(GONE)
    out = StringIO()
    call_command("purge_namespace", GONE, "--dry-run", stdout=out)
    assert "would delete 2 row(s) of ingest_event" in out.getvalue()
    assert "would rebuild 1 job(s)" in out.getvalue()
    assert _tables_naming(GONE) == before
    assert not NamespacePurge.objects.exists()


def test_purge_leaves_nothing_and_rebuilds_the_other_job(world) -> None:
    out = StringIO()
    call_command("purge_namespace", GONE, "--by", "alice", stdout=out)
    assert _tables_naming(GONE) == {}
    assert not Event.objects.filter(job_namespace=GONE).exists()
    assert Event.objects.count() == 1  # the other job's event that never named it
    report = Job.objects.get(namespace="etl", name="report")
    edges = LineageEdge.objects.filter(job=report).values_list("source__name", "target__name")
    assert list(edges) == [("src", "out")]
    record = NamespacePurge.objects.get()
    assert record.purged_by == "alice" and record.rows["ingest_event"] == 2
    assert record.rows["ingest_dead_letter"] == 1
    assert "done, by alice" in out.getvalue()
    again = StringIO()
    call_command("purge_namespace", GONE, stdout=again)  # again: nothing left to do
    assert Event.objects.count() == 1
    # Said so, as for a namespace misspelled: not only "done".
    assert f"no row names the namespace {GONE!r}: nothing to delete" in again.getvalue()
    assert "no row names" not in out.getvalue()


def test_purge_takes_what_retention_kept_and_a_rederive_does_not_bring_it_back(world) -> None:
    """Retention folds the removed runs into summaries keyed by job and alias hashes (ADR
    0079); a purge after it removes those too, or the next rederive would derive the
    namespace again from them."""
    with connection.cursor() as cursor:
        cursor.execute("UPDATE ingest_event SET received_at = received_at - interval '40 days'")
        cursor.execute("UPDATE catalog_run SET updated_at = updated_at - interval '40 days'")
    assert apply_retention(30).events == 3
    assert RetainedEdge.objects.exists() and _tables_naming(GONE)
    call_command("purge_namespace", GONE, stdout=StringIO())
    assert _tables_naming(GONE) == {}
    assert list(RetainedEdge.objects.values_list("source_key", flat=True)) == [
        stored_key("pg://keep", "src")
    ]
    assert rederive().failed == 0
    assert _tables_naming(GONE) == {}
    assert set(Dataset.objects.values_list("name", flat=True)) == {"src", "out"}


# As a producer spells it: the catalog keeps a job's namespace so, and normalises a
# dataset's to postgres://old-db:5432 (a lower-case host, the default port).
SENT = "postgres://Old-DB"
NORMALISED = "postgres://old-db:5432"


@pytest.mark.parametrize("given", [SENT, NORMALISED])
def test_a_namespace_spelled_as_sent_is_purged_as_jobs_and_datasets_spell_it(given: str) -> None:
    """The purge matched everything against the normalised spelling: purge_namespace
    postgres://Old-DB, the job namespace as the catalog lists it, removed nothing of its
    job or its events and said it was done; and an event not derived yet, which names
    the datasets as sent, was kept by either spelling (to be derived back)."""
    own = run_event(
        "COMPLETE",
        0,
        "00000000-0000-0000-0000-0000000000d1",
        job=(SENT, "nightly"),
        inputs=[dataset(SENT, "public.orders")],
        outputs=[dataset("pg://keep", "copy")],
    )
    reader = run_event(
        "COMPLETE",
        10,
        "00000000-0000-0000-0000-0000000000d2",
        job=("etl", "reader"),
        inputs=[dataset(SENT, "public.orders")],
        outputs=[dataset("pg://keep", "report")],
    )
    derive_events(store([openlineage(own), openlineage(reader)]))
    # Not derived yet: only its payload names the namespace, as sent.
    pending = run_event(
        "START",
        20,
        "00000000-0000-0000-0000-0000000000d3",
        job=("etl", "late"),
        inputs=[dataset(SENT, "public.orders")],
    )
    store([openlineage(pending)])
    assert Job.objects.filter(namespace=SENT).exists()
    assert Dataset.objects.filter(namespace=NORMALISED).exists()

    call_command("purge_namespace", given, stdout=StringIO())

    # Every event named it (a job of it, or a dataset of it as sent); jobs that lost every
    # event are rebuilt from none.
    assert not Event.objects.exists()
    assert _tables_naming("Old-DB") == {}
    assert _tables_naming(NORMALISED) == {}
    assert not Job.objects.exists()


def test_a_worker_deriving_while_the_purge_runs_brings_nothing_back(world) -> None:
    """Ingest and derivation go on during a purge. An event of the namespace not derived
    yet, derived by a worker after the purge deleted the namespace's rows and before it
    deleted the events, left its job and datasets behind with no event, for a second
    purge to find. The worker's batch is run at that step (through the progress hook)."""
    late = run_event(
        "COMPLETE",
        30,
        "00000000-0000-0000-0000-00000000000e",
        job=(GONE, "late"),
        outputs=[dataset(GONE, "db.late")],
    )
    store([openlineage(late)])

    def worker_between_steps(message: str) -> None:
        if message == "deleting events":
            derive_pending_batch(0)

    purge_namespace(GONE, "alice", progress=worker_between_steps)
    assert _tables_naming(GONE) == {}
    again = purge_namespace(GONE, "alice", dry_run=True)
    assert not any(again.counts.values())


def test_a_dataset_event_not_derived_yet_is_purged() -> None:
    """The payload of an event not derived yet was read for its inputs and outputs only: a
    DatasetEvent of the namespace (as sent) stayed, and the sweep derived it back."""
    event = {
        "eventTime": "2026-01-01T12:00:09Z",
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": dataset(SENT, "public.seen"),
    }
    store([openlineage(event)])
    report = purge_namespace(NORMALISED, "alice")
    derive_pending_batch(0)
    assert report.counts["ingest_event"] == 1 and not Event.objects.exists()
    assert _tables_naming("Old-DB") == {} and _tables_naming(NORMALISED) == {}


def _namespace_of(jobs: int) -> None:
    """``jobs`` jobs of the purged namespace with ``jobs`` runs each, each reading ``jobs``
    datasets of its own there and writing one they all write: what a job ran and touched,
    and what touches a dataset, grow with ``jobs``. A job elsewhere with 2 runs, and
    ``jobs`` more that read that dataset too (rebuilt from those 2)."""
    events = [
        run_event(
            "COMPLETE",
            job * 100 + run,
            f"00000000-0000-0000-0000-{job:06d}{run:06d}",
            job=(GONE, f"job{job}"),
            inputs=[dataset(GONE, f"in{job}.{read}") for read in range(jobs)],
            outputs=[dataset(GONE, "all")],
        )
        for job in range(jobs)
        for run in range(jobs)
    ]
    events += [
        run_event(
            "COMPLETE",
            10_000 + run,
            f"00000000-0000-0000-0000-999999{run:06d}",
            job=("etl", "report"),
            inputs=[dataset("pg://keep", "src"), *([dataset(GONE, "all")] if run >= 2 else [])],
            outputs=[dataset("pg://keep", "out")],
        )
        for run in range(2 + jobs)
    ]
    derive_events(store([openlineage(event) for event in events]))


class _MostRowsRead:
    """The most rows any statement returned to Python (what it then held at once)."""

    def __init__(self) -> None:
        self.most, self.statement = 0, ""
        self.payloads: list[str] = []  # statements that read events' payloads through the ORM

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        cursor = context["cursor"]
        if '"ingest_event"."payload"' in sql:
            self.payloads.append(sql)
        if cursor.description is not None and cursor.rowcount > self.most:
            self.most, self.statement = cursor.rowcount, sql
        return result


def test_the_purge_reads_a_batch_of_ids_at_a_time_however_big_the_namespace(monkeypatch) -> None:
    """Its memory grew with the namespace: every event id at once, every id of each step,
    the other jobs' events, the retained keys, and (Django's delete of a batch of jobs)
    every run and edge of those jobs or of a batch of datasets, and each batch of events
    with its payloads (up to 8 MiB each). With batches of 2, the most rows any statement
    returns is the same for a namespace of 2 jobs x 2 runs x 2 datasets and one of 3 x 3 x
    3, and no payload is read but by derivation."""
    monkeypatch.setattr(purge, "BATCH", 2)
    most = []
    for jobs in (2, 3):
        with transaction.atomic():
            _namespace_of(jobs)
            read = _MostRowsRead()
            with connection.execute_wrapper(read):
                report = purge_namespace(GONE, "alice")
            assert report.counts["ingest_event"] == jobs * jobs + jobs
            assert report.counts["catalog_run"] == jobs * jobs + jobs + 2  # etl.report's too
            assert _tables_naming(GONE) == {}
            most.append((read.most, read.statement))
            assert read.payloads == []
            transaction.set_rollback(True)
    assert most[1][0] == most[0][0], most[1][1]
    assert most[1][0] <= 2 * purge.BATCH, most[1][1]


def _rows_per_table() -> dict[str, int]:
    counts = {}
    with connection.cursor() as cursor:
        for label in ("catalog", "ingest"):
            for model in apps.get_app_config(label).get_models(include_auto_created=True):
                cursor.execute(f"SELECT count(*) FROM {model._meta.db_table}")
                counts[model._meta.db_table] = cursor.fetchone()[0]
    return counts


def test_a_purge_in_batches_of_two_ends_as_one_in_batches_of_thousands(monkeypatch) -> None:
    """The same counts, dry or not, the same rows left, the other job rebuilt the same."""
    _namespace_of(3)
    ends = []
    for batch in (purge.BATCH, 2):
        monkeypatch.setattr(purge, "BATCH", batch)
        with transaction.atomic():
            dry = purge_namespace(GONE, "alice", dry_run=True)
            done = purge_namespace(GONE, "alice")
            report = Job.objects.get(namespace="etl", name="report")
            edges = LineageEdge.objects.filter(job=report).values_list("source__name", flat=True)
            ends.append((dry, done, _rows_per_table(), sorted(edges)))
            transaction.set_rollback(True)
    assert ends[0] == ends[1]
    dry, done, rows, edges = ends[1]
    assert dry.counts["ingest_event"] == done.counts["ingest_event"] == 3 * 3 + 3
    assert (done.rebuilt_jobs, done.rederived_events) == (1, 2)
    assert edges == ["src"] and rows["ingest_event"] == 2


def test_a_namespace_or_a_name_that_is_no_text_is_refused_before_anything_is_deleted() -> None:
    """A shell passes bytes that are not UTF-8 (``$'\\xff'``) as a surrogate escape, which
    no query nor JSON can carry: the purge printed a ``TypeError`` traceback for such a
    namespace, and for such a ``--by`` a ``UnicodeEncodeError`` one once it had deleted
    everything, its audit record never written (ADR 0209)."""
    from django.core.management.base import CommandError

    run = "00000000-0000-0000-0000-00000000000a"
    derive_events(store([openlineage(run_event("COMPLETE", 1, run, job=(GONE, "copy")))]))
    with pytest.raises(CommandError, match=r"namespace .* is not UTF-8 text"):
        call_command("purge_namespace", "mysql://db\udcff", "--dry-run", stdout=StringIO())
    with pytest.raises(CommandError, match=r"--by .* is not UTF-8 text"):
        call_command("purge_namespace", GONE, "--by", "\udcff", stdout=StringIO())
    assert Event.objects.filter(job_namespace=GONE).exists()
    assert not NamespacePurge.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_purge_whose_last_derivation_fails_leaves_it_to_the_sweep_and_is_recorded() -> None:
    """The purge derives the events its rebuilt jobs keep itself, a batch of 500 spanning
    the runIds a stream is deriving; under one, such a batch met 5 deadlocks in a row (all
    ``retrying`` tries) and the command ended in a traceback, done but for its audit record
    (ADR 0209). Those events are pending already (set in the jobs' transaction), which the
    worker's sweep derives: a derivation that fails now leaves them to it and says so. Here
    it fails by the purge's ``lock_timeout`` while a batch holds the kept run's text."""
    import threading

    from tests.catalog.helpers import run_texts_held

    kept_run = "scheduled__2026-02-01"
    events = [
        run_event("COMPLETE", 1, "gone-run", job=("etl", "report"), inputs=[dataset(GONE, "db.t")]),
        run_event("COMPLETE", 2, kept_run, job=("etl", "report")),
    ]
    derive_events(store([openlineage(event) for event in events]))
    deriving, reports, errors = threading.Event(), [], []

    def progress(message: str) -> None:
        if message.startswith("deriving"):
            deriving.set()
            assert held.wait(10)

    def purge() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = '1s'")
            reports.append(purge_namespace(GONE, by="test", progress=progress))
        except BaseException as error:
            errors.append(error)
        finally:
            deriving.set()
            connection.close()

    held = threading.Event()
    purger = threading.Thread(target=purge)
    purger.start()
    try:
        assert deriving.wait(30)
        with run_texts_held([kept_run]):
            held.set()
            purger.join(30)
    finally:
        held.set()
        purger.join(30)
    assert errors == []
    (report,) = reports
    assert report.left_pending == 1
    kept = Event.objects.get(run_id=kept_run)
    assert kept.derivation_status == "pending"
    assert NamespacePurge.objects.count() == 1
    derive_pending_batch(0)  # the sweep
    assert Run.objects.filter(run_id_text=kept_run, job__name="report").exists()

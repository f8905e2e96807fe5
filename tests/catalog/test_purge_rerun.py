"""``manage.py purge_namespace`` stopped at any step (killed, a lost connection) and run
again ends as a purge that never stopped (ADR 0165): nothing of the namespace is left in
any table, and the rest of the store is as an uninterrupted purge leaves it."""

from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import OperationalError, connection, transaction

from catalog.models import Dataset, Job, LineageEdge, NamespacePurge, WebhookSubscription
from catalog.services import purge, retirement
from catalog.services.derive import derive_events, derive_pending_batch
from catalog.services.purge import purge_namespace
from catalog.services.retirement import Actor
from ingest.models import DeadLetter
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.catalog.test_purge_namespace import GONE

pytestmark = pytest.mark.django_db


def _run(seconds: int, job: tuple[str, str], **sides: Any) -> dict[str, Any]:
    return run_event("COMPLETE", seconds, f"00000000-0000-0000-0000-{seconds:012d}", job, **sides)


def _store_naming_it_every_way() -> None:
    """A tiny store where an event names the namespace each way the purge finds one."""
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/lineage")
    symlink = {"namespace": "pg://k", "name": "v", "type": "TABLE"}
    depends = {"upstream": [{"job": {"namespace": GONE, "name": "copy"}}]}
    events = [
        # Its own job, reading and writing there.
        _run(1, (GONE, "copy"), inputs=[dataset(GONE, "db.a")], outputs=[dataset(GONE, "db.b")]),
        # Other namespaces' jobs: one read a dataset of it, one wrote one (with a name
        # elsewhere too: a symlink, so the dataset stays), one ran after a job of it
        # (jobDependencies: found through the control edges); each has an event that never
        # named it, which it is rebuilt from.
        _run(
            2, ("etl", "report"), inputs=[dataset(GONE, "db.b")], outputs=[dataset("pg://k", "o")]
        ),
        _run(
            3, ("etl", "report"), inputs=[dataset("pg://k", "s")], outputs=[dataset("pg://k", "o")]
        ),
        _run(
            4,
            ("etl", "view"),
            outputs=[dataset(GONE, "db.v", symlinks=facet(identifiers=[symlink]))],
        ),
        _run(5, ("etl", "view"), outputs=[dataset("pg://k", "v")]),
        _run(6, ("etl", "after"), run_facets={"jobDependencies": facet(**depends)}),
        _run(7, ("etl", "after"), outputs=[dataset("pg://k", "a")]),
        # No job: a DatasetEvent. Not derived, its payload's inputs and outputs would not
        # find it; derived, only the alias (catalog_event_dataset) does.
        {
            "eventTime": "2026-01-01T12:00:09Z",
            "producer": "https://example.com/test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
            "dataset": dataset(GONE, "db.seen"),
        },
    ]
    derive_events(store([openlineage(event) for event in events]))
    # Not derived yet: only its payload names it.
    store([openlineage(_run(8, ("etl", "late"), inputs=[dataset(GONE, "db.a")]))])
    retirement.retire(Dataset.objects.get(name="db.a"), Actor("stew"), "old")
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


def _rows_naming_it_and_all() -> tuple[dict[str, int], dict[str, int]]:
    """Per table of the catalog and ingest: the rows whose text (any column) names it, and
    all its rows (but the audit records, written when a run ends: one per run that ended).
    One statement, read 22 times."""
    tables = [
        model._meta.db_table
        for label in ("catalog", "ingest")
        for model in apps.get_app_config(label).get_models(include_auto_created=True)
        if model is not NamespacePurge
    ]
    counts = " UNION ALL ".join(
        f"SELECT '{table}', count(*) FILTER (WHERE position(%s in t::text) > 0), count(*) "
        f"FROM {table} t"
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(counts, [GONE] * len(tables))
        rows = cursor.fetchall()
    return {table: naming for table, naming, _ in rows if naming}, {
        table: count for table, _, count in rows
    }


class _Stopped(Exception):
    pass


def _state() -> Any:
    """Every table's rows and the events' derivation statuses."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT derivation_status, count(*) FROM ingest_event GROUP BY 1 ORDER BY 1")
        return _rows_naming_it_and_all()[1], cursor.fetchall()


def _purged(stop_at: str | None, steps: list[str]) -> Any:
    """The store after a purge stopped when it says ``stop_at`` (if given; the progress hook
    is called between steps, each batch a transaction, as a kill or a lost connection
    would stop it), a second purge, and the derivation sweep (the rebuilt jobs' events a
    stopped run left pending); rolled back to the store before. Adds to ``steps`` what it
    says where the store has changed since it last said something (a stop where it has
    not would only repeat the one before: its retained summaries, none here, for one)."""
    states: list[Any] = []

    def progress(message: str) -> None:
        if stop_at is None:
            states.append(_state())
            if states[-2:-1] != states[-1:]:
                steps.append(message)
        if message == stop_at:
            raise _Stopped(message)

    with transaction.atomic():
        try:
            purge_namespace(GONE, "alice", progress=progress)
        except _Stopped:
            pass
        else:
            assert stop_at is None, f"never said {stop_at!r}"
        call_command("purge_namespace", GONE, stdout=StringIO())
        while derive_pending_batch(0).claimed:
            pass
        end = (
            *_rows_naming_it_and_all(),
            sorted(Job.objects.values_list("namespace", "name")),
            # With what each shows (ADR 0167: rebuilt from the events it keeps).
            sorted(Dataset.objects.values_list("namespace", "name", "facets", "display_rank")),
            sorted(LineageEdge.objects.values_list("job__name", "source__name", "target__name")),
        )
        transaction.set_rollback(True)
    return end


def test_a_purge_stopped_at_any_step_and_run_again_leaves_nothing_of_it() -> None:
    """A purge stopped after it rebuilt the other namespaces' jobs, or after it deleted the
    namespace's aliases, and before it deleted the events, left the derived events that
    named it other than as their job's namespace (a dataset of it, a job of it their run
    depended on, a DatasetEvent) where a second run could not find them: the rows it found
    them through were gone (the other job, the aliases), and nothing said so. Stopped at
    every step it says (where the store changed since the one before), then run again, it
    ends as a purge that never stopped."""
    _store_naming_it_every_way()
    steps: list[str] = []
    whole = _purged(None, steps)
    assert {"deleting aliases", "deleting events"} <= set(steps)  # it stops where it matters
    assert whole[0] == {} and ("etl", "after") in whole[2]
    # pg://k/v stays, with none of the facets (the symlink) the purged event gave it.
    assert [row[2] for row in whole[3] if row[:2] == ("pg://k", "v")] == [{}]
    differ = {}
    for step in steps:
        end = _purged(step, [])
        if end != whole:  # what is left of the namespace, then the tables whose rows differ
            rows = {table: n for table, n in end[1].items() if whole[1][table] != n}
            differ[step] = (end[0], rows, end[2:] == whole[2:])
    assert differ == {}, steps


class _LostConnection:
    """Fails the ``nth`` statement that starts with ``prefix``, as a connection lost there."""

    def __init__(self, prefix: str, nth: int) -> None:
        self.prefix, self.left = prefix, nth

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.lstrip().startswith(self.prefix):
            self.left -= 1
            if self.left == 0:
                raise OperationalError("server closed the connection unexpectedly")
        return execute(sql, params, many, context)


@pytest.mark.parametrize(
    "statement",
    ['DELETE FROM "catalog_dataset_alias"', 'DELETE FROM "ingest_event"'],
    ids=["aliases", "events"],
)
def test_a_purge_stopped_within_a_step_and_run_again_leaves_nothing_of_it(
    monkeypatch, statement: str
) -> None:
    """In batches of one, the second batch of the aliases' or of the events' deletes fails
    (a transaction each: the first stays done); run again, the purge ends as one that never
    stopped."""
    monkeypatch.setattr(purge, "BATCH", 1)
    _store_naming_it_every_way()
    whole = _purged(None, [])
    with transaction.atomic():
        with (
            pytest.raises(OperationalError),
            connection.execute_wrapper(_LostConnection(statement, 2)),
        ):
            purge_namespace(GONE, "alice")
        assert _purged(None, []) == whole
        transaction.set_rollback(True)

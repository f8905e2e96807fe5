"""Retention (ADR 0079): old events and runs go, lineage stays, a rederive gives it back.

The store: the demo's real events plus runs that merge datasets through a symlink, half
of them received 40 days ago (their runs last derived then too), the rest now.
"""

import io
import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from catalog.models import (
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    Job,
    JobDataset,
    JobLineageEdge,
    LineageEdge,
    Run,
)
from catalog.services.derive import derive_events, rederive
from catalog.services.retention import (
    FIRST_BATCH_SIZE,
    MAX_DAYS,
    MIN_BATCH_SIZE,
    apply_retention,
    next_batch_size,
)
from ingest import demo
from ingest.models import Event
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

AGE = timedelta(days=40)


def _own_events(offset: int) -> list[Any]:
    """Two jobs over a table the symlink of the later run joins to its location."""
    table = {"namespace": "hive://m:9083", "name": "db.sales", "type": "TABLE"}
    events = []
    for index in range(3):
        run_id = str(uuid.uuid4())
        seconds = offset + index * 60
        columns = facet(
            fields={
                "id": {
                    "inputFields": [
                        {"namespace": "pg://db:5432", "name": "raw.orders", "field": "id"}
                    ]
                }
            }
        )
        outputs = [
            dataset(
                "s3://lake", "sales", symlinks=facet(identifiers=[table]), columnLineage=columns
            )
        ]
        events += [
            run_event(
                "START",
                seconds,
                run_id,
                job=("etl", "load"),
                inputs=[dataset("pg://db:5432", "raw.orders")],
            ),
            run_event("COMPLETE", seconds + 30, run_id, job=("etl", "load"), outputs=outputs),
        ]
    report = str(uuid.uuid4())
    events.append(
        run_event(
            "COMPLETE",
            offset + 500,
            report,
            job=("bi", "report"),
            inputs=[dataset("hive://m:9083", "db.sales")],
            outputs=[dataset("s3://bi", "kpi")],
        )
    )
    return [openlineage(event) for event in events]


def _age(event_ids: list[int]) -> None:
    """Received 40 days ago, and every run derived so far last written then."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ingest_event SET received_at = received_at - %s WHERE id = ANY(%s)",
            [AGE, event_ids],
        )
        cursor.execute("UPDATE catalog_run SET updated_at = updated_at - %s", [AGE])


@pytest.fixture
def aged_store() -> dict[str, list[int]]:
    old = demo.load(demo.demo_events()).event_ids + store(_own_events(0))
    assert derive_events(old).failed == 0
    _age(old)
    new = store(_own_events(10_000))
    assert derive_events(new).failed == 0
    return {"old": old, "new": new}


def _lineage() -> dict[str, Any]:
    """Every job, dataset and edge the catalog shows, by id, with spans and counts."""
    return {
        "jobs": {
            job.id: (job.namespace, job.name, job.first_seen, job.last_seen, job.description)
            for job in Job.objects.all()
        },
        "datasets": {
            item.id: (item.namespace, item.name, item.first_seen, item.last_seen, item.facets)
            for item in Dataset.objects.all()
        },
        "aliases": sorted(DatasetAlias.objects.values_list("namespace", "name", "dataset_id")),
        "edges": sorted(
            LineageEdge.objects.values_list(
                "source_id",
                "target_id",
                "job_id",
                "first_seen",
                "last_seen",
                "run_count",
                "completed_run_count",
            )
        ),
        "column_edges": sorted(
            ColumnLineageEdge.objects.values_list(
                "source_id",
                "source_field",
                "target_id",
                "target_field",
                "job_id",
                "first_seen",
                "last_seen",
                "run_count",
            )
        ),
        "job_edges": sorted(
            JobLineageEdge.objects.values_list(
                "job_id",
                "dataset_id",
                "direction",
                "first_seen",
                "last_seen",
                "run_count",
                "completed_run_count",
            )
        ),
    }


def test_retention_removes_old_events_and_runs_and_keeps_the_graph_through_a_rederive(
    aged_store: dict[str, list[int]],
) -> None:
    before = _lineage()
    runs_before = Run.objects.count()

    result = apply_retention(30, batch_size=7)  # several batches of each kind

    assert result.events == len(aged_store["old"]) and result.bytes > 0
    assert not Event.objects.filter(id__in=aged_store["old"]).exists()
    assert Event.objects.filter(id__in=aged_store["new"]).count() == len(aged_store["new"])
    assert 0 < result.runs == runs_before - Run.objects.count()
    assert _lineage() == before

    assert rederive(batch_size=5).failed == 0
    assert _lineage() == before


def test_batches_over_the_time_budget_shrink_and_remove_the_same(
    aged_store: dict[str, list[int]],
) -> None:
    before = _lineage()
    # Every batch is over a budget of a nanosecond: 16 runs, then the floor of 10, in
    # more transactions than the 22 old runs need at a fixed 16.
    result = apply_retention(30, batch_size=16, time_budget=1e-9)
    assert result.smallest_batch == MIN_BATCH_SIZE and result.batches >= 3
    assert result.events == len(aged_store["old"]) and result.runs > 0
    assert _lineage() == before
    assert rederive(batch_size=5).failed == 0
    assert _lineage() == before


def test_the_next_batch_shrinks_in_proportion_over_budget_and_doubles_well_under_it() -> None:
    # Over the budget: aimed at half of it (1,000 rows in 3 s -> 333 rows for 1 s) ...
    assert next_batch_size(1000, elapsed=3.0, budget=2.0, ceiling=1000) == 333
    assert next_batch_size(1000, elapsed=5.1, budget=2.0, ceiling=1000) == 196
    # ... which is always at least a halving, however little it was over.
    assert next_batch_size(1000, elapsed=2.1, budget=2.0, ceiling=1000) == 476
    assert next_batch_size(12, elapsed=3.0, budget=2.0, ceiling=1000) == MIN_BATCH_SIZE
    assert next_batch_size(4, elapsed=3.0, budget=2.0, ceiling=4) == 4  # a ceiling below it
    assert next_batch_size(500, elapsed=0.1, budget=2.0, ceiling=1000) == 1000
    assert next_batch_size(800, elapsed=0.1, budget=2.0, ceiling=1000) == 1000
    assert next_batch_size(500, elapsed=1.0, budget=2.0, ceiling=1000) == 500


def test_the_first_batch_is_small_and_grows_while_batches_are_quick(
    aged_store: dict[str, list[int]],
) -> None:
    # A store's first batch is never the full ceiling: its time is not known yet.
    result = apply_retention(30, batch_size=1_000, time_budget=60.0)
    assert result.smallest_batch == FIRST_BATCH_SIZE
    assert result.events == len(aged_store["old"])
    assert apply_retention(30, batch_size=4, time_budget=60.0).smallest_batch == 4


def _job_datasets() -> list[tuple[Any, ...]]:
    """What each job reads and writes (``JobDataset``), by names, with spans."""
    return sorted(
        JobDataset.objects.values_list(
            "job__namespace",
            "job__name",
            "alias__namespace",
            "alias__name",
            "direction",
            "declared",
            "first_seen",
            "last_seen",
        )
    )


def test_what_jobs_read_and_wrote_survives_retention_and_a_rederive(
    aged_store: dict[str, list[int]],
) -> None:
    before = _job_datasets()
    assert apply_retention(30).runs > 0
    assert _job_datasets() == before
    assert rederive(batch_size=5).failed == 0
    assert _job_datasets() == before


def test_dry_run_changes_nothing_and_a_second_run_removes_nothing(
    aged_store: dict[str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    events = Event.objects.count()
    call_command("retention", "--days", "30", "--dry-run")
    dry = capsys.readouterr().out
    assert Event.objects.count() == events
    assert f"would remove {len(aged_store['old'])} events" in dry

    call_command("retention", "--days", "30")
    done = capsys.readouterr().out
    # The dry run counted exactly what the run removed (its transactions differ).
    counted = dry.split("): ")[1].split(" in ")[0]
    assert done.split("): ")[1].split(" in ")[0].replace("removed", "would remove") == counted
    call_command("retention", "--days", "30")
    assert "removed 0 events (0 bytes) and 0 runs" in capsys.readouterr().out


def test_nothing_newer_than_the_window_goes(aged_store: dict[str, list[int]]) -> None:
    result = apply_retention(41)  # the aged events are 40 days old
    assert (result.events, result.runs) == (0, 0)
    assert Event.objects.count() == len(aged_store["old"]) + len(aged_store["new"])


def test_a_merge_after_retention_keeps_the_removed_runs_counts(
    aged_store: dict[str, list[int]],
) -> None:
    """The edge into the table's dataset is recomputed from its runs when a new link
    merges it: the removed runs' summary is added back, not lost."""
    apply_retention(30)
    sales = Dataset.objects.for_alias("hive://m:9083", "db.sales").get()
    edge = LineageEdge.objects.get(target=sales, job__name="load")
    before = (edge.first_seen, edge.run_count, edge.completed_run_count)
    other = {"namespace": "gs://mirror", "name": "sales", "type": "LOCATION"}
    merge = run_event(
        "COMPLETE",
        20_000,
        str(uuid.uuid4()),
        job=("bi", "mirror"),
        inputs=[dataset("hive://m:9083", "db.sales", symlinks=facet(identifiers=[other]))],
    )
    assert derive_events(store([openlineage(merge)])).failed == 0
    edge = LineageEdge.objects.get(
        target=Dataset.objects.for_alias("hive://m:9083", "db.sales").get(), job__name="load"
    )
    assert (edge.first_seen, edge.run_count, edge.completed_run_count) == before


@pytest.mark.parametrize("budget", ["0", "-1", "nan"])
def test_a_bad_time_budget_is_refused_readably(budget: str) -> None:
    with pytest.raises(CommandError, match="--time-budget"):
        call_command("retention", "--days", "30", "--time-budget", budget)


@pytest.mark.parametrize("days", ["0", "-3", "ten", "365001", "800000", "1000000000"])
def test_bad_days_are_refused_readably(days: str) -> None:
    """A window longer than Python's dates reach was an OverflowError traceback."""
    with pytest.raises(CommandError, match="--days"):
        call_command("retention", "--days", days)


def test_the_longest_window_is_accepted_and_removes_nothing(
    aged_store: dict[str, list[int]],
) -> None:
    out = io.StringIO()
    call_command("retention", "--days", str(MAX_DAYS), stdout=out)
    assert "removed 0 events" in out.getvalue()


def test_without_days_or_the_setting_the_command_says_what_to_give(settings: Any) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "RETENTION_DAYS": 0}
    with pytest.raises(CommandError, match="LINEAGE_RETENTION_DAYS"):
        call_command("retention")


def test_the_daily_task_uses_the_setting(aged_store: dict[str, list[int]], settings: Any) -> None:
    from catalog import tasks  # the task module, as the worker loads it

    settings.LINEAGE = {**settings.LINEAGE, "RETENTION_DAYS": 0}
    assert tasks.apply_retention() == 0  # unset: keep everything
    assert Event.objects.filter(id__in=aged_store["old"]).exists()
    settings.LINEAGE = {**settings.LINEAGE, "RETENTION_DAYS": 30}
    assert tasks.apply_retention() == len(aged_store["old"])
    assert tasks.apply_retention() == 0  # run twice: nothing more


def test_an_old_event_still_pending_is_kept() -> None:
    """Not derived yet, its lineage is nowhere else: retention leaves it, however old,
    whether its run is in the catalog (the run phase) or not (the event phase)."""
    run = str(uuid.uuid4())
    derive_events(store([openlineage(run_event("START", 0, run, job=("etl", "late")))]))
    pending = store(
        [
            openlineage(run_event("COMPLETE", 5, run, job=("etl", "late"))),
            openlineage(run_event("COMPLETE", 5, str(uuid.uuid4()), job=("etl", "other"))),
        ]
    )
    _age(list(Event.objects.values_list("id", flat=True)))
    apply_retention(30)
    assert sorted(Event.objects.values_list("id", flat=True)) == sorted(pending)


@pytest.mark.django_db(transaction=True)
def test_retention_racing_derivation_of_the_same_runs_ends_consistent() -> None:
    """Late events of old runs are derived (one connection) while retention removes those
    runs (another): whichever takes a run first, no event fails, and the catalog equals
    a rederive of what is left (the removed runs' summaries plus the events still held)."""
    runs = [str(uuid.uuid4()) for _ in range(12)]
    io = {"inputs": [dataset("pg://db:5432", "raw.in")], "outputs": [dataset("s3://lake", "out")]}
    old = store(
        [
            openlineage(run_event(kind, index * 10 + offset, run, job=("etl", "race"), **io))
            for index, run in enumerate(runs)
            for kind, offset in (("START", 0), ("COMPLETE", 5))
        ]
    )
    assert derive_events(old).failed == 0
    _age(old)
    late = store(
        [
            openlineage(run_event("OTHER", 1_000 + index, run, job=("etl", "race"), **io))
            for index, run in enumerate(runs[::2])
        ]
    )
    barrier = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []

    def work(step: Any) -> None:
        try:
            barrier.wait()
            step()
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    steps = [
        lambda: [derive_events([event_id]) for event_id in late],
        lambda: apply_retention(30, batch_size=2),
    ]
    threads = [threading.Thread(target=work, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    derive_events(
        list(Event.objects.filter(derivation_status="pending").values_list("id", flat=True))
    )
    assert not Event.objects.exclude(derivation_status="derived").exists()
    live = _lineage()
    edge = LineageEdge.objects.get(job__name="race")
    # Every run counted once, whether retention or the late event took it first, and a
    # run removed and then named again by its late event counted again (a new run).
    assert len(runs) <= edge.run_count <= len(runs) + len(late)
    assert rederive(batch_size=4).failed == 0
    after = _lineage()
    assert after["edges"] == live["edges"]
    assert after["job_edges"] == live["job_edges"]
    assert after == live


def test_a_retired_snapshot_run_keeps_its_newest_windows_column_lineage() -> None:
    """A COMPLETE_SNAPSHOT stream's column edges are its newest window's (ADR 0091): the
    summary retention keeps of it holds those, so a rederive after it draws no mapping of
    the older windows back."""
    from tests.api.project_fixtures import flink_snapshots

    old = flink_snapshots()
    done = {**old[-1], "eventType": "COMPLETE", "eventTime": "2026-11-20T11:03:00.000Z"}
    old_ids = store([openlineage(event) for event in [*old, done]])
    assert derive_events(old_ids).failed == 0
    _age(old_ids)
    before = _lineage()
    assert {edge[1] for edge in before["column_edges"]} == {"id", "version"}
    assert len(before["column_edges"]) == 2  # input2's two fields only
    assert apply_retention(30).runs == 1
    assert _lineage() == before
    assert rederive(batch_size=2).failed == 0
    assert _lineage() == before


@pytest.mark.parametrize("days", ["", "90"])
def test_beat_runs_retention_daily_at_03_17_utc_only_when_the_setting_is_set(days: str) -> None:
    """docs/deploy.md "Retention": unset, nothing is removed; LINEAGE_RETENTION_DAYS=N makes
    beat run catalog.apply_retention daily at 03:17 UTC. The schedule as the beat process
    reads it: a fresh Celery application on production settings."""
    import json
    import os
    import subprocess
    import sys

    from django.conf import settings as django_settings

    program = "\n".join(
        [
            "import datetime, json",
            "from config.celery import app",
            "app.loader.import_default_modules()",
            "entry = [v for v in app.conf.beat_schedule.values()",
            "         if v['task'] == 'catalog.apply_retention']",
            "before = datetime.datetime(2026, 1, 1, 3, 16, tzinfo=datetime.UTC)",
            "due = [v['schedule'].remaining_delta(before) for v in entry]",
            "print(json.dumps({'entries': len(entry), 'timezone': str(app.conf.timezone),",
            "    'registered': 'catalog.apply_retention' in app.tasks,",
            "    'next': [str(d[0] + d[1]) for d in due]}))",
        ]
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "retention-schedule-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "lineage.example.com",
        "LINEAGE_RETENTION_DAYS": days,
    }
    found = subprocess.run(
        [sys.executable, "-c", program],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr[-2000:]
    answer = json.loads(found.stdout.strip().splitlines()[-1])
    assert answer["registered"] is True
    if not days:
        assert answer["entries"] == 0
        return
    assert answer["entries"] == 1 and answer["timezone"] in {"UTC", "None"}
    assert answer["next"] == ["2026-01-01 03:17:00+00:00"]

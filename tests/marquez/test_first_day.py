"""What a Marquez user sees first: the dashboard's counters and its "Jobs" panel.

Against Marquez's published behaviour (MarquezProject/marquez, api/.../db/StatsDao.java,
JobDao.findAll, DatasetDao.findAll): /stats/jobs and /stats/datasets are running totals per
interval (everything created before the window plus each interval's new ones), jobs are
listed by last update newest first, datasets by name.
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client

from catalog.models import DATASETS_BY_NAME, JOBS_BY_UPDATE, Dataset, Job
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.marquez.conftest import JOB_NS, S3, event
from tests.marquez.test_shapes import ok

pytestmark = pytest.mark.django_db


def _send(client: Client, *documents: dict) -> None:
    for document in documents:
        response = client.post("/marquez/api/v1/lineage", document, content_type="application/json")
        assert response.status_code == 201, response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))


def _at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_stats_are_running_totals_ending_with_how_many_there_are(world, ingest_client, mz):
    # world: two jobs and three datasets first seen on 2026-11-01, before either window.
    now = datetime.now(UTC)
    recent = now - timedelta(hours=2)
    if recent.hour > now.hour:  # two hours ago was yesterday (UTC): keep it in today's bucket
        recent = now.replace(hour=0, minute=1, second=0)
    _send(
        ingest_client,
        event(
            "COMPLETE",
            _at(recent),
            "01930000-0000-7000-8000-0000000000a1",
            "etl.recent",
            [],
            [{"namespace": S3, "name": "recent/out"}],
        ),
        event("COMPLETE", _at(now), "01930000-0000-7000-8000-0000000000a2", "etl.now", [], []),
    )
    jobs = [item["count"] for item in ok(mz.get("/stats/jobs", period="DAY", timezone="UTC"))]
    recent_bucket = 23 - (
        now.replace(minute=0, second=0, microsecond=0)
        - recent.replace(minute=0, second=0, microsecond=0)
    ) // timedelta(hours=1)
    assert len(jobs) == 24
    assert jobs[:recent_bucket] == [2] * recent_bucket
    assert jobs[recent_bucket:23] == [3] * (23 - recent_bucket)
    assert jobs[-1] == 4 == Job.objects.count()  # the UI's counter: the last interval
    datasets = [item["count"] for item in ok(mz.get("/stats/datasets", period="DAY"))]
    assert datasets[0] == 3 and datasets[-1] == 4 == Dataset.objects.count()
    week = [item["count"] for item in ok(mz.get("/stats/jobs", period="WEEK", timezone="UTC"))]
    assert len(week) == 7 and week[:6] == [2] * 6 and week[-1] == 4
    assert all(item["count"] == 0 for item in ok(mz.get("/stats/sources", period="DAY")))


def test_jobs_newest_update_first_datasets_by_name(ingest_client, mz):
    base = datetime(2026, 11, 2, 9, tzinfo=UTC)
    runs = iter(f"01930000-0000-7000-8000-0000000001{index:02d}" for index in range(10))
    # Sent (and so numbered) in an order that is neither alphabetical nor by time.
    _send(
        ingest_client,
        event(
            "COMPLETE",
            _at(base),
            next(runs),
            "b.oldest",
            [],
            [{"namespace": S3, "name": "zeta/orders"}],
        ),
        event(
            "COMPLETE",
            _at(base + timedelta(hours=2)),
            next(runs),
            "a.newest",
            [],
            [{"namespace": S3, "name": "alpha/orders"}],
        ),
        event(
            "COMPLETE",
            _at(base + timedelta(hours=1)),
            next(runs),
            "c.middle",
            [],
            [{"namespace": S3, "name": "mid/orders"}],
        ),
    )
    for path in ("/jobs", f"/namespaces/{JOB_NS}/jobs"):
        names = [job["name"] for job in ok(mz.get(path))["jobs"]]
        assert names == ["a.newest", "c.middle", "b.oldest"], path
        updated = [job["updatedAt"] for job in ok(mz.get(path))["jobs"]]
        assert updated == sorted(updated, reverse=True)
    # A later run of the oldest job makes it the newest.
    _send(
        ingest_client,
        event("COMPLETE", _at(base + timedelta(hours=3)), next(runs), "b.oldest", [], []),
    )
    assert [job["name"] for job in ok(mz.get("/jobs", limit="2"))["jobs"]] == [
        "b.oldest",
        "a.newest",
    ]
    assert [job["name"] for job in ok(mz.get("/jobs", limit="2", offset="2"))["jobs"]] == [
        "c.middle"
    ]
    datasets = ok(mz.get(f"/namespaces/{S3}/datasets"))["datasets"]
    assert [dataset["name"] for dataset in datasets] == [
        "alpha/orders",
        "mid/orders",
        "zeta/orders",
    ]


def test_both_orders_are_index_walks() -> None:
    """The list orders are served by their indexes (catalog/migrations/0012), not a sort of
    every job or every dataset of a namespace."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        jobs = Job.objects.order_by(*JOBS_BY_UPDATE)[:50]
        cursor.execute("EXPLAIN " + str(jobs.query))
        assert "catalog_job_update_idx" in str(cursor.fetchall())
        datasets = Dataset.objects.filter(namespace=S3).order_by(*DATASETS_BY_NAME)[:50]
        sql, params = datasets.query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        assert "catalog_dataset_ns_name_idx" in str(cursor.fetchall())

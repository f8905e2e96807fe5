"""The event list searched by a runId (the run page's "events of this run") reads a page of
the run's events, however many it has (ADR 0183).

The search matched the term to runId, job name and producer at once: PostgreSQL read every
match of the three, or walked the log back by id, to show 50. It now asks which columns hold
the term (each index's first entry), searches those, and lists a run's events newest
eventTime first: a range of ingest_event_run_time_idx read backwards, counted in that order.
"""

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from ingest.models import Event
from tests.api.factories import make_event
from tests.api.test_run_events_bounded import (
    HEARTBEATS,
    _event_statements,
    _events,
    _others_and_analyze,
)
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

RUN_ID = "00000000-0000-4000-8000-0000005e4ea1"
PAGE = 50
INDEXES = {"ingest_event_run_time_idx", "ingest_event_job_md5", "ingest_event_producer_md5"}


def test_a_runs_events_newest_time_first_reading_a_page(super_client: Client) -> None:
    """A page of the run's 1,000 events beside 6,000 others: the newest by eventTime (ids
    off time order), read as index entries only: the search's probe (one entry), the capped
    count (the run's range) and the page (50 entries). Before: all three columns' matches,
    or the primary key walked back, outside those indexes."""
    _events(RUN_ID, "stream", HEARTBEATS, "2026-01-01T00:00:00Z")
    _others_and_analyze()
    path = f"/admin/ingest/event/?q={RUN_ID}"
    response = super_client.get(path)
    assert response.status_code == 200
    rows = list(response.context["cl"].result_list)
    assert {event.run_id for event in rows} == {RUN_ID}
    keys = [(event.event_time, event.id) for event in rows]
    assert len(keys) == PAGE
    assert keys == sorted(keys, reverse=True)
    newest = Event.objects.filter(run_id=RUN_ID).order_by("-event_time", "-id").first()
    assert newest is not None and rows[0].id == newest.id
    read: dict[str, int] = {}
    for sql in _event_statements(super_client, path):
        for scan, rows in rows_read(sql, "ingest_event").items():
            read[scan] = read.get(scan, 0) + rows
    assert set(read) <= INDEXES, read
    assert read["ingest_event_run_time_idx"] <= 1 + HEARTBEATS + PAGE, read


def test_the_count_of_a_run_at_the_logs_end_reads_its_range(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run is much of the log and its newest part, and the count's cap (10,000) is a
    small part of the run, as at a streaming run's scale (lowered to 100 here): PostgreSQL's
    own plan (no scan priced out) for the capped count reads the cap's entries in the run's
    order (before, unordered, a sequential scan of the log until that many turned up, the
    6,000 others' events first)."""
    monkeypatch.setattr("core.admin_base.COUNT_CAP", 100)
    monkeypatch.setattr("ingest.admin.COUNT_CAP", 100)
    _others_and_analyze()
    _events(RUN_ID, "stream", 4 * HEARTBEATS, "2026-01-01T00:00:00Z")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_event")
    path = f"/admin/ingest/event/?q={RUN_ID}"
    (count,) = [sql for sql in _event_statements(super_client, path) if "COUNT(" in sql]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + count)
        plan = cursor.fetchone()[0][0]["Plan"]
    scans: list[Any] = []

    def walk(node: dict[str, Any]) -> None:
        if node.get("Relation Name") == "ingest_event":
            scans.append((node.get("Index Name"), node.get("Rows Removed by Filter", 0)))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    # An index in the run's order (its range, or the log's time order, the run being its
    # newest events), nothing read but what is counted.
    ((index, removed),) = scans
    assert index in {"ingest_event_run_time_idx", "ingest_event_time_idx"}, plan
    assert removed == 0, plan
    assert plan["Plans"][0]["Actual Rows"] == 101, plan


def test_a_term_that_several_columns_hold_finds_each(super_client: Client) -> None:
    """A runId that is also a job name (and a producer that is neither): the search still
    finds the events of each column that holds the term, in the log's id order."""
    by_run = make_event(run_id="etl.load")
    by_job = make_event(job_namespace="airflow", job_name="etl.load", run_id="other")
    make_event(run_id="unrelated", producer="etl.load.producer")
    rows = super_client.get("/admin/ingest/event/?q=etl.load").context["cl"].result_list
    assert [event.id for event in rows] == [by_job.id, by_run.id]
    assert list(super_client.get("/admin/ingest/event/?q=nowhere").context["cl"].result_list) == []

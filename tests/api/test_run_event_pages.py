"""A run's events are listed a page at a time, and a runId's runs found without its events
(ADR 0183).

``/api/v1/events?run_id=`` lists the run's events newest eventTime first, then id: a page is
a range of ingest_event_run_time_idx ``(md5(run_id), event_time, id)`` read backwards. In id
order PostgreSQL walked the primary key back from the log's newest event, filtering, or read
and sorted every event of the run. ``/api/v1/runs/{runId}`` for a runId that is no UUID
finds its runs on catalog_run_text_idx ``(md5(run_id_text), id)``: before, the DISTINCT jobs
of every event carrying the runId. The streaming run is built with SQL beside many small
runs (tests/api/test_run_events_bounded.py's), its ids off its time order.
"""

import base64
from typing import Any

import pytest
from django.db import connection

from api.views.catalog import RELATED_LIMIT
from catalog.models import Run
from catalog.names import naming
from tests.api.factories import T0, add_runs_of_job, make_event, make_job, make_run
from tests.api.test_run_events_bounded import (
    HEARTBEATS,
    _event_statements,
    _events,
    _others_and_analyze,
)
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

PAGE = 50
# A Spark application's runId: no UUID, so its run is keyed by uuid5 over job and text.
TEXT_RUN_ID = "app-20260101000000-0042"


@pytest.fixture
def stream() -> Any:
    """A streaming run of HEARTBEATS events, beside OTHER_RUNS runs of 3."""
    run = make_run(make_job("stream", namespace="tests"), is_streaming=True)
    _events(run.run_id_text, "stream", HEARTBEATS, "2026-01-01T00:00:00Z")
    _others_and_analyze()
    return run


def _page(api: Any, path: str) -> dict[str, Any]:
    response = api.get(path, RAW_URI=path)
    assert response.status_code == 200, response.content
    return response.json()


def _relative(link: str) -> str:
    return link[link.index("/api/v1/") :]


def test_a_runs_events_newest_time_first_in_pages(api, stream) -> None:
    """Every event of the run once, newest eventTime first (ids are off time order), over
    pages that each read the page's entries of the run's range, one to know a next, and
    after the first page the cursor's own row (before: 5,000+ of the primary key)."""
    path = f"/api/v1/events?run_id={stream.run_id_text}&limit={PAGE}"
    seen: list[dict[str, Any]] = []
    pages = 0
    while path:
        for sql in _event_statements(api, path):
            scans = rows_read(sql, "ingest_event")
            read = PAGE + 1 + min(pages, 1)
            assert scans == {"ingest_event_run_time_idx": read}, (scans, sql)
        body = _page(api, path)
        seen.extend(body["results"])
        pages += 1
        path = _relative(body["next"]) if body["next"] and pages < 3 else ""
    keys = [(event["event_time"], event["id"]) for event in seen]
    assert len(keys) == 3 * PAGE == len(set(keys))
    assert keys == sorted(keys, reverse=True)
    assert keys[0][0].startswith("2026-01-01T01:23:20")  # the last heartbeat: 1,000 x 5 s


def test_a_runs_pages_reach_back_and_forth(api, stream) -> None:
    """The whole run through ``next``, and a page's ``previous`` is the page before it."""
    path = f"/api/v1/events?run_id={stream.run_id_text}&limit=200"
    pages: list[list[int]] = []
    links: list[dict[str, Any]] = []
    while path:
        body = _page(api, path)
        pages.append([event["id"] for event in body["results"]])
        links.append(body)
        path = _relative(body["next"]) if body["next"] else ""
    assert sum(len(page) for page in pages) == HEARTBEATS
    assert len({event for page in pages for event in page}) == HEARTBEATS
    back = _page(api, _relative(links[2]["previous"]))
    assert [event["id"] for event in back["results"]] == pages[1]


def test_the_log_unfiltered_stays_newest_id_first(api, stream) -> None:
    ids = [event["id"] for event in _page(api, "/api/v1/events?limit=20")["results"]]
    assert ids == sorted(ids, reverse=True)


def _text_run(job_name: str, **fields: Any) -> Run:
    """A run of ``job_name`` keyed by TEXT_RUN_ID as derivation keys it (uuid5)."""
    fields.setdefault("is_placeholder", False)
    return Run.objects.create(
        run_uuid=naming.job_run_uuid(TEXT_RUN_ID, "tests", job_name),
        run_id_text=TEXT_RUN_ID,
        job=make_job(job_name, namespace="tests"),
        state="RUNNING" if fields.get("is_streaming") else "COMPLETE",
        started_at=T0,
        first_event_time=T0,
        last_event_time=T0,
        **fields,
    )


def test_a_text_run_ids_detail_reads_no_more_events_than_it_shows(api) -> None:
    """A streaming run whose runId is no UUID: the detail finds it (and the run of another
    job that sent the runId) without reading the run's events; the one statement that reads
    them is its shown events, a range of RELATED_LIMIT and the other job's few (before, also
    the DISTINCT jobs of every event carrying the runId, twice: HEARTBEATS + 3 each)."""
    run = _text_run("stream", is_streaming=True, shares_run_id=True)
    other = _text_run("other", shares_run_id=True)
    _events(TEXT_RUN_ID, "stream", HEARTBEATS, "2026-01-01T00:00:00Z")
    _events(TEXT_RUN_ID, "other", 3, "2026-01-01T00:00:01Z")
    _others_and_analyze()
    path = f"/api/v1/runs/{TEXT_RUN_ID}?job_id={run.job_id}"
    body = _page(api, path)
    assert body["run_id"] == str(run.run_uuid)
    assert [same["job"]["id"] for same in body["same_run_id_runs"]] == [other.job_id]
    assert len(body["events"]) == RELATED_LIMIT
    (sql,) = _event_statements(api, path)
    # Its own and, interleaved among them, the other job's 3 (ADR 0181's shared runId).
    assert rows_read(sql, "ingest_event") == {"ingest_event_run_time_idx": RELATED_LIMIT + 3}, sql


def test_a_text_run_id_names_at_most_its_first_runs_read_on_their_index(api) -> None:
    """25 jobs sent one text runId, after 2,000 runs of other runIds: the runs it names are
    its first 20 by id (``jobs_limit``), 20 entries of catalog_run_text_idx, with no event of
    them stored (their runs are); not the runs walked by id from the first."""
    add_runs_of_job(make_job("batch", namespace="tests").id)
    runs = [_text_run(f"job{number:02d}") for number in range(25)]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_run")
    named = Run.objects.named(TEXT_RUN_ID)
    assert sorted(named.values_list("id", flat=True)) == [run.id for run in runs[:20]]
    sql, params = named.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
    scans: list[tuple[str, int]] = []

    def walk(node: dict[str, Any]) -> None:
        # Executed: the read that a text with the same md5 would need is planned, never run
        # (ADR 0202).
        if node.get("Index Name") == "catalog_run_text_idx" and node.get("Actual Loops"):
            read = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            scans.append((node["Index Name"], int(read * node.get("Actual Loops", 1))))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    assert scans == [("catalog_run_text_idx", 20)], plan


def test_a_placeholder_of_a_text_run_id_is_found_as_a_uuids_is(api) -> None:
    """A run known only from a child's parent facet (a placeholder) keeps its runId as sent:
    found by it, as a UUID runId's placeholder is (before: only once its own events came)."""
    placeholder = _text_run("parent", is_placeholder=True)
    body = _page(api, f"/api/v1/runs/{TEXT_RUN_ID}")
    assert body["run_id"] == str(placeholder.run_uuid)


def test_a_cursor_of_the_id_order_is_refused_on_a_run(api) -> None:
    """A position kept from when a run's events were listed by id is no (time, id)
    position: a 400 problem, not a page misread from it."""
    first = make_event(run_id="r1")
    make_event(run_id="r1")
    cursor = base64.b64encode(f"p={first.id}".encode()).decode()
    response = api.get(f"/api/v1/events?run_id=r1&cursor={cursor}")
    assert response.status_code == 400, response.content
    assert response.json()["type"].endswith("invalid-cursor")

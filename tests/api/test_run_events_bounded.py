"""A run's events are read as far as a read shows them, however many the run has (ADR 0181).

The REST run detail (``/api/v1/runs/{runId}``) shows the run's first 200 events by eventTime
and id; the Marquez mount's dataset versions read the newest events of each version's run
that wrote the dataset. Both are a range of ingest_event_run_time_idx ``(md5(run_id),
event_time, id)`` read in order, stopping there. Before, ``ingest_event_run_md5`` held no
time: PostgreSQL read every event of the run and sorted them, and a streaming run sends a
heartbeat every few seconds for months. The streaming run is built with SQL: more events
than a read shows, inserted in an order a little off their times, beside many small runs.
"""

import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.views.catalog import RELATED_LIMIT
from catalog.models import RunDataset
from catalog.reads.versions import WRITTEN_EVENTS_PER_PAGE
from tests.api.factories import make_dataset, make_job, make_run
from tests.marquez.conftest import MarquezClient
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

HEARTBEATS = 5 * RELATED_LIMIT
OTHER_RUNS = 2000

# %(count)s events of runId %(run)s of job %(job)s, %(step)s apart from %(start)s, in an
# insertion order off their times (ids do not follow eventTime).
_EVENTS = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status)
SELECT 'run', 'RUNNING', %(start)s::timestamptz + i * %(step)s::interval, %(run)s, 'tests',
    %(job)s, 'https://tests/producer', jsonb_build_object('outputs', jsonb_build_array()),
    sha256(convert_to(%(job)s || %(run)s || ':' || i, 'UTF8')), 'done'
FROM generate_series(1, %(count)s) AS i
ORDER BY (i * 7919) %% %(count)s
"""


def _events(run: str, job: str, count: int, start: str, step: str = "5 seconds") -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            _EVENTS, {"run": run, "job": job, "count": count, "start": start, "step": step}
        )


# %(runs)s more runs of 3 events each (runIds of their own), their times interleaved with
# the stream's and starting before it: a log of many runs, whose statistics say one run is
# a small part of it, and whose time order alone is no way to a run's events.
_OTHER_EVENTS = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status)
SELECT 'run', 'COMPLETE', '2025-12-31T23:00:00Z'::timestamptz + (r * 3 + j) * interval '1 second',
    md5('other' || r), 'tests', 'batch', 'https://tests/producer', '{}',
    sha256(convert_to('other' || r || ':' || j, 'UTF8')), 'done'
FROM generate_series(1, %(runs)s) AS r, generate_series(1, 3) AS j
"""


def _others_and_analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute(_OTHER_EVENTS, {"runs": OTHER_RUNS})
        cursor.execute("ANALYZE ingest_event")


@pytest.fixture
def stream() -> Any:
    """A completed streaming run of HEARTBEATS events, beside OTHER_RUNS runs of 3."""
    run = make_run(make_job("stream", namespace="tests"), is_streaming=True)
    _events(run.run_id_text, "stream", HEARTBEATS, "2026-01-01T00:00:00Z")
    _others_and_analyze()
    return run


def _event_statements(client: Any, path: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, RAW_URI=path)
        assert response.status_code == 200, response.content
    statements = [q["sql"] for q in captured.captured_queries if "ingest_event" in q["sql"]]
    assert statements
    return statements


def test_the_detail_shows_the_first_events_by_time(api, stream) -> None:
    events = api.get(f"/api/v1/runs/{stream.run_uuid}").json()["events"]
    times = [event["event_time"] for event in events]
    assert len(times) == RELATED_LIMIT
    assert times == sorted(times)
    assert times[0].startswith("2026-01-01T00:00:05")  # the first heartbeat, not the first id


def test_the_detail_reads_the_events_it_shows(api, stream) -> None:
    """One statement reads the run's events: RELATED_LIMIT entries of the run's index range
    in order, however many the run sent (before: all HEARTBEATS of them, then a sort)."""
    for sql in _event_statements(api, f"/api/v1/runs/{stream.run_uuid}"):
        scans = rows_read(sql, "ingest_event")
        assert scans == {"ingest_event_run_time_idx": RELATED_LIMIT}, (scans, sql)


def test_a_shared_run_id_reads_its_own_jobs_events_in_order(api) -> None:
    """Two jobs sent one runId (each keeps its run, ADR 0028), their events interleaved in
    time: the detail of one shows its own job's and reads the range until it has them."""
    shared = uuid.uuid4()
    text = str(shared)
    runs = {
        name: make_run(make_job(name, namespace="tests"), run_uuid=shared, shares_run_id=True)
        for name in ("left", "right")
    }
    _events(text, "left", HEARTBEATS, "2026-01-01T00:00:00Z", "10 seconds")
    _events(text, "right", HEARTBEATS, "2026-01-01T00:00:05Z", "10 seconds")
    _others_and_analyze()
    path = f"/api/v1/runs/{text}?job_id={runs['left'].job_id}"
    events = api.get(path).json()["events"]
    assert len(events) == RELATED_LIMIT
    times = [event["event_time"] for event in events]
    assert times == sorted(times)
    assert times[0].startswith("2026-01-01T00:00:10")  # left's first; right's was at :15
    for sql in _event_statements(api, path):
        scans = rows_read(sql, "ingest_event")
        # Its own and the other job's interleaved: at most twice what it shows.
        assert set(scans) == {"ingest_event_run_time_idx"}, (scans, sql)
        assert scans["ingest_event_run_time_idx"] <= 2 * RELATED_LIMIT, (scans, sql)


def test_a_versions_page_reads_the_newest_events_of_the_write(api, stream) -> None:
    """The Marquez versions of the streaming run's output: the run's newest events that wrote
    it (WRITTEN_EVENTS_PER_PAGE for one version), read backwards on the run's range."""
    dataset = make_dataset("stream.out", namespace="tests")
    alias = dataset.aliases.get()
    RunDataset.objects.create(
        run=stream,
        alias=alias,
        direction="output",
        first_seen=stream.started_at,
        last_seen=stream.started_at,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO catalog_event_dataset (role, alias_id, event_id) SELECT 'output', %s, id"
            " FROM ingest_event WHERE run_id = %s",
            [alias.id, stream.run_id_text],
        )
        cursor.execute("ANALYZE catalog_event_dataset")
    mz = MarquezClient(api)
    path = "/marquez/api/v1/namespaces/tests/datasets/stream.out/versions"
    assert len(mz.get(path.removeprefix("/marquez/api/v1")).json()["versions"]) == 1
    for sql in _event_statements(api, path):
        scans = rows_read(sql, "ingest_event")
        read = scans.pop("ingest_event_run_time_idx")
        assert read == WRITTEN_EVENTS_PER_PAGE, (read, sql)
        assert scans.pop("ingest_event_pkey", 0) <= WRITTEN_EVENTS_PER_PAGE, (scans, sql)
        assert not scans, (scans, sql)

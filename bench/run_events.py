"""A run's events when the run is a stream of heartbeats (ADRs 0181, 0183).

Builds, with SQL, one completed streaming run of ``--events`` events (a START, RUNNING
heartbeats 5 s apart, a COMPLETE; each naming the run's one output, as a streaming job's
events do), a second one as long whose runId is no UUID (Spark's ``app-...``), an ordinary
run of 3 events and ``--other-runs`` more runs of 3 events of another job (a month before
the streams and during them), then GETs from the shipped WSGI application in process
(``read_request_cpu.in_process_reader``): the REST run detail ``/api/v1/runs/{runId}`` of
each run (its first 200 events by eventTime; for the text runId, the runs it names), the
Marquez mount's versions of the streaming run's output
(``namespaces/{ns}/datasets/{name}/versions``: the newest events of each version's run that
wrote it), the first two pages of ``/api/v1/events?run_id=`` of the stream, and the admin's
event list searched by its runId (the run page's "events of this run"; a superuser's
session). Prints per read: the median and slowest wall milliseconds of ``--requests``
requests, the statements one request ran, and, for the statements that read
``ingest_event``, the rows their scans of it read, their execution milliseconds and the
shared buffers they touched (each replayed under ``EXPLAIN (ANALYZE, BUFFERS)``;
``--plans`` prints each scan).

Usage: .venv/bin/python bench/run_events.py --database URL [--events 100000]
       [--other-runs 30000] [--requests 20] [--plans] [--reuse]
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.catalog_rows import JOB, RUN
from bench.common import migrated_database
from bench.read_request_cpu import captured_and_timed, in_process_reader
from catalog.names import naming

RUN_STREAM = "00000000-0000-4000-8000-0000005e4ea1"
RUN_SMALL = "00000000-0000-4000-8000-0000000005aa"
# A runId that is no UUID: the run is keyed by uuid5 over its job and this text (ADR 0028).
RUN_TEXT = "app-20260101000000-0042"
OUTPUT = ("bench", "stream.out")


# The output dataset, its alias and the run's link to it (a write: the run completed).
_OUTPUT = """
WITH d AS (
    INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, owners,
        tags, browse_path)
    VALUES (%(namespace)s, %(name)s, '{}', '{}', '', 'active', false, now(), now(), now(), 0,
        '[]', '[]', '')
    RETURNING id
), a AS (
    INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
        reason_version, first_seen, last_seen, dataset_id, is_table_name)
    SELECT %(namespace)s, %(name)s, sha256(convert_to(%(namespace)s, 'UTF8') || '\\x00'::bytea
        || convert_to(%(name)s, 'UTF8')), 'event', '', '[]', now(), now(), d.id, false
    FROM d
    RETURNING id
)
INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen, last_seen, via,
    confirmed)
SELECT %(run_id)s, a.id, 'output', now(), now(), '', false FROM a
RETURNING alias_id
"""

# %(count)s events of run %(run)s of job %(job_name)s, %(step)s apart from %(start)s: the
# first a START, the last a COMPLETE, RUNNING between; each names the output. Inserted in
# an order a little off their times (a heartbeat's late arrival), as a log holds them.
_EVENTS = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status)
SELECT 'run', t.event_type, t.at, %(run)s::text, 'bench', %(job_name)s::text, 'https://bench/producer',
    jsonb_build_object('eventType', t.event_type, 'eventTime', t.at,
        'run', jsonb_build_object('runId', %(run)s::text),
        'job', jsonb_build_object('namespace', 'bench', 'name', %(job_name)s::text),
        'producer', 'https://bench/producer',
        'outputs', jsonb_build_array(jsonb_build_object('namespace', %(namespace)s::text,
            'name', %(name)s::text, 'facets', jsonb_build_object()))),
    sha256(convert_to(%(run)s::text || ':' || t.i, 'UTF8')), 'done'
FROM (
    SELECT i, %(start)s::timestamptz + (i - 1) * %(step)s::interval AS at,
        CASE WHEN i = 1 THEN 'START' WHEN i = %(count)s THEN 'COMPLETE' ELSE 'RUNNING' END
            AS event_type
    FROM generate_series(1, %(count)s) AS i
) t
ORDER BY t.i + (hashtext(t.i::text) %% 7)
"""

# %(runs)s runs of 3 events of another job (runIds of their own), their times interleaved
# with the stream's and a month of them before it: a log of many runs, in which one run's
# events are a part, and its time order no way to them.
_OTHER_EVENTS = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status)
SELECT 'run', 'COMPLETE', '2025-12-01T00:00:00Z'::timestamptz + (r * 3 + j) * interval '1 minute',
    md5('other' || r), 'bench', 'batch', 'https://bench/producer', '{}',
    sha256(convert_to('other' || r || ':' || j, 'UTF8')), 'done'
FROM generate_series(1, %(runs)s) AS r, generate_series(1, 3) AS j
"""

# The text runId's run: keyed by uuid5 over its job and the text, the text kept as sent.
_TEXT_RUN = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    started_at, ended_at, first_event_time, last_event_time, error_message, is_streaming,
    facets, facet_versions, job_version, updated_at, shares_run_id, tags)
VALUES (%(uuid)s::uuid, %(run)s::text, %(job)s, false, 'COMPLETE', '[]',
    now() - interval '1 year', now(), now() - interval '1 year', now(), '', true,
    '{}', '{}', '[]', now(), false, '[]')
"""

# Each event of the run names the output: its event-dataset row (derivation writes one).
_EVENT_OUTPUTS = """
INSERT INTO catalog_event_dataset (role, alias_id, event_id)
SELECT 'output', %(alias)s, e.id FROM ingest_event e
WHERE md5(e.run_id) = md5(%(run)s) AND e.run_id = %(run)s
"""


def build(database_url: str, events: int, others: int) -> None:
    """The runs and their events in a new database."""
    with psycopg.connect(database_url, autocommit=True) as connection:
        namespace, name = OUTPUT
        started = time.monotonic()
        job = connection.execute(JOB, {"name": "streamer"}).fetchone()[0]
        for run, count, step in ((RUN_STREAM, events, "5 seconds"), (RUN_SMALL, 3, "1 minute")):
            run_id = connection.execute(
                RUN, {"run": run, "job": job, "age": "1 year", "streaming": True}
            ).fetchone()[0]
            alias = None
            if run == RUN_STREAM:
                alias = connection.execute(
                    _OUTPUT, {"run_id": run_id, "namespace": namespace, "name": name}
                ).fetchone()[0]
            connection.execute(
                _EVENTS,
                {
                    "run": run,
                    "job_name": "streamer",
                    "count": count,
                    "step": step,
                    "start": "2026-01-01T00:00:00Z",
                    "namespace": namespace,
                    "name": name,
                },
            )
            if alias is not None:
                connection.execute(_EVENT_OUTPUTS, {"alias": alias, "run": run})
        text_uuid = naming.run_uuid(RUN_TEXT, "bench", "streamer")
        connection.execute(_TEXT_RUN, {"uuid": str(text_uuid), "run": RUN_TEXT, "job": job})
        connection.execute(
            _EVENTS,
            {
                "run": RUN_TEXT,
                "job_name": "streamer",
                "count": events,
                "step": "5 seconds",
                "start": "2026-01-01T00:00:02Z",
                "namespace": namespace,
                "name": name,
            },
        )
        connection.execute(_OTHER_EVENTS, {"runs": others})
        print(
            f"  two streaming runs of {events:,} events, a run of 3 and {others:,} runs of 3 in "
            f"{time.monotonic() - started:.1f}s",
            flush=True,
        )
        connection.execute("VACUUM ANALYZE")


def event_scans(connection: psycopg.Connection, sql: str, plans: bool) -> tuple[int, int, float]:
    """The rows ``sql``'s scans of ingest_event read (kept or filtered out), the shared
    buffers its plan touched and its execution milliseconds, by ``EXPLAIN (ANALYZE,
    BUFFERS)``; ``plans``: print each scan of ingest_event."""
    explain = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql
    answer = connection.execute(explain).fetchone()[0][0]  # type: ignore[index]
    plan = answer["Plan"]

    def scanned(node: dict[str, Any]) -> int:
        own = 0
        if node.get("Relation Name") == "ingest_event":
            loops = node.get("Actual Loops", 1)
            own = int((node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * loops)
            own += int(node.get("Rows Removed by Index Recheck", 0) * loops)
            if plans:
                print(f"      {node['Node Type']} {node.get('Index Name', '')}: {own:,} rows")
        return own + sum(scanned(child) for child in node.get("Plans", []))

    if plans:
        print("    " + " ".join(sql.split())[:120])
    buffers = plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
    return scanned(plan), buffers, answer["Execution Time"]


def measure(call: Any, path: str, requests: int, database_url: str, plans: bool) -> None:
    body, statements, times = captured_and_timed(call, path, requests)
    rows = buffers = 0
    executed = 0.0
    with psycopg.connect(database_url, autocommit=True) as replay:
        for sql in statements:
            if "ingest_event" in sql and sql.lstrip("( \n").upper().startswith("SELECT"):
                read, touched, ms = event_scans(replay, sql, plans)
                rows += read
                buffers += touched
                executed += ms
    print(
        f"{path[:64]:<64} median {statistics.median(times):8.1f} ms  max {max(times):8.1f} ms"
        f"  {len(statements):2d} statements  events read {rows:7,} in {executed:6.1f} ms"
        f"  buffers {buffers:6,}"
        f"  {len(body):8,} bytes",
        flush=True,
    )


def admin_reader(database_url: str) -> Any:
    """A function that GETs an admin path as a superuser (a session of Django's test
    client, on the settings ``in_process_reader`` set up) and returns the body."""
    from django.contrib.auth import get_user_model  # here: Django is set up by then
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(
        username="bench-run-events", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)

    def call(path: str) -> bytes:
        response = client.get(path)
        if response.status_code != 200:
            raise SystemExit(f"{path}: {response.status_code}")
        return bytes(response.content)

    return call


def next_page(call: Any, path: str) -> str:
    """The path of the page after ``path``'s (its ``next`` link, from ``/api/v1/``)."""
    link = json.loads(call(path))["next"]
    return link[link.index("/api/v1/") :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--other-runs", type=int, default=30_000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--plans", action="store_true", help="print each scan of the log")
    parser.add_argument("--reuse", action="store_true", help="the store a run before built")
    options = parser.parse_args()
    if not options.reuse:
        migrated_database(options.database)
        build(options.database, options.events, options.other_runs)
    call = in_process_reader(options.database, "run-events")
    namespace, name = OUTPUT
    events = f"/api/v1/events?run_id={RUN_STREAM}"
    for path in (
        f"/api/v1/runs/{RUN_SMALL}",
        f"/api/v1/runs/{RUN_STREAM}",
        f"/api/v1/runs/{RUN_TEXT}",
        f"/marquez/api/v1/namespaces/{namespace}/datasets/{name}/versions",
        events,
        next_page(call, events),
    ):
        measure(call, path, options.requests, options.database, options.plans)
    admin = admin_reader(options.database)
    measure(
        admin,
        f"/admin/ingest/event/?q={RUN_STREAM}",
        options.requests,
        options.database,
        options.plans,
    )


if __name__ == "__main__":
    main()

"""Bytes per stored event against the event's JSON (issue 42 item 3, its storage half).

Each stream of bench/streams.py (the derivation benchmarks' events: the corpus's Spark
events and the generated fleets) is stored through the shipped path (``record_events``,
what the batch endpoint and Kafka ingest call) into a freshly migrated scratch database,
in batches of 500; then, after a VACUUM ANALYZE, ingest_event's heap, TOAST and every
index are measured and divided by the events stored. The JSON size is the compact JSON
as a producer sends it (orjson, keys as given). The target is at most 1.2x.

With --per-column it prints the mean stored size of each column (``pg_column_size``: after
compression, before the row's alignment), and the rest of the heap per row (tuple header,
line pointer, alignment, free space). With --before the same streams are measured again
with the layout before migration ingest 0007 (ADR 0103: rows under the TOAST threshold
compressed too), migrating back and forth in the one run, so the two compare at one load.

With --alter it also times each statement of ``--alter`` on the filled table (the last
stream's), so a migration's cost on a live store is measured, not guessed.

Usage: .venv/bin/python -m bench.storage [--events 20000]
    [--streams scheduled,hot,fleet,shared-datasets] [--per-index] [--per-column] [--before]
"""

import argparse
import os
import time
from pathlib import Path

import orjson
import psycopg

from bench.common import migrated_django_without_broker
from bench.streams import STREAMS

SIZES = """
SELECT pg_relation_size(c.oid), coalesce(pg_total_relation_size(c.reltoastrelid), 0),
       pg_indexes_size(c.oid)
FROM pg_class c WHERE c.oid = 'ingest_event'::regclass
"""
INDEXES = """
SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_index i WHERE i.indrelid = 'ingest_event'::regclass ORDER BY 2 DESC
"""
COLUMNS = """
SELECT attname FROM pg_attribute
WHERE attrelid = 'ingest_event'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum
"""
BEFORE = "0006_event_payload_lz4"  # the layout ADR 0103 changed


def backend_cpu() -> float | None:
    """CPU seconds used so far by this process's PostgreSQL backend (from /proc: the server
    must run on this machine), or None where that cannot be read. CPU, unlike elapsed
    time, hardly moves with the load other sessions put on a shared machine."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fill(stream: str, count: int) -> tuple[float, float, float | None]:
    """Store ``count`` events of ``stream``: the mean bytes of their compact JSON, the
    seconds ``record_events`` took (the storage path alone: not making or validating) and
    the CPU seconds its PostgreSQL backend spent (None if not readable)."""
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    json_bytes, seconds = 0, 0.0
    cpu_before = backend_cpu()
    for start in range(0, count, 500):
        events = STREAMS[stream](start, min(500, count - start))
        json_bytes += sum(len(orjson.dumps(event)) for event in events)
        records = [validate_openlineage(event) for event in events]
        started = time.perf_counter()
        record_events(records)
        seconds += time.perf_counter() - started
    cpu_after = backend_cpu()
    server = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return json_bytes / count, seconds, server


def column_sizes(connection: psycopg.Connection) -> dict[str, float]:
    names = [name for (name,) in connection.execute(COLUMNS).fetchall()]
    means = ", ".join(f"avg(coalesce(pg_column_size({name}), 0))" for name in names)
    row = connection.execute(f"SELECT {means} FROM ingest_event").fetchone() or ()
    return {name: float(size) for name, size in zip(names, row, strict=True)}


def measure(database_url: str, stream: str, count: int, per_index: bool, per_column: bool) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("TRUNCATE ingest_event CASCADE")  # a fresh log each stream
    mean_json, seconds, server = fill(stream, count)
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE ingest_event")
        heap, toast, indexes = connection.execute(SIZES).fetchone() or (0, 0, 0)
        payload = connection.execute(
            "SELECT avg(pg_column_size(payload)) FROM ingest_event"
        ).fetchone()
        index_rows = connection.execute(INDEXES).fetchall()
        columns = column_sizes(connection)
    total = heap + toast + indexes
    print(
        f"{stream:16} {count:>7,} events, JSON {mean_json:7.0f} B/event; stored "
        f"{total / count:7.0f} B/event (heap {heap / count:.0f}, TOAST {toast / count:.0f}, "
        f"indexes {indexes / count:.0f}; payload column {float(payload[0] or 0):.0f}): "
        f"{total / count / mean_json:.2f}x the JSON (target <= 1.2); record_events "
        f"{count / seconds:,.0f} events/s, its backend's CPU "
        + (f"{server / count * 1e6:.0f} µs/event" if server is not None else "n/a"),
        flush=True,
    )
    if per_index:
        print("  " + ", ".join(f"{name} {size / count:.0f}" for name, size in index_rows))
    if per_column:
        rest = heap / count - sum(columns.values())
        print(
            "  columns: "
            + ", ".join(f"{name} {size:.0f}" for name, size in columns.items() if size)
            + f"; the rest of the heap (header, pointer, alignment, free space) {rest:.0f}"
        )


def timed_alter(database_url: str, statements: list[str]) -> None:
    with psycopg.connect(database_url, autocommit=True) as connection:
        rows = connection.execute("SELECT count(*) FROM ingest_event").fetchone()[0]
        for statement in statements:
            started = time.perf_counter()
            connection.execute(statement)
            seconds = time.perf_counter() - started
            print(f"  {statement}: {seconds:.3f} s on {rows:,} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--streams", default="scheduled,hot,fleet,shared-datasets")
    parser.add_argument("--per-index", action="store_true", help="bytes per event per index")
    parser.add_argument("--per-column", action="store_true", help="bytes per event per column")
    parser.add_argument(
        "--before", action="store_true", help=f"again with the layout of ingest {BEFORE}"
    )
    parser.add_argument(
        "--alter", action="append", default=[], help="a statement to time on the filled table"
    )
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_storage_bytes"
    )
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    migrated_django_without_broker(args.database_url)
    layouts = ["migrated", BEFORE] if args.before else ["migrated"]
    for layout in layouts:
        if layout != "migrated":
            from django.core.management import call_command

            call_command("migrate", "ingest", layout, verbosity=0)
        print(f"layout: {layout}", flush=True)
        for stream in args.streams.split(","):
            measure(args.database_url, stream, args.events, args.per_index, args.per_column)
    if args.before:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    if args.alter:
        timed_alter(args.database_url, args.alter)


if __name__ == "__main__":
    main()

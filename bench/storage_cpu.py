"""The PostgreSQL CPU an event row costs to insert, in ingest_event's layout and the one
before ADR 0103 (issue 42 item 3: the insert path must not get slower).

Two tables like ingest_event (``LIKE ... INCLUDING ALL``, so every index and default): one
with the layout as migrated (the pad column, ``toast_tuple_target = 128``, ``STORAGE
MAIN``), one with the layout before it (no pad, EXTENDED, the default target). The same
events of a stream (bench/streams.py) go into each by one ``INSERT ... SELECT`` from a
staging table, the tables taking turns for --rounds rounds; the backend's CPU time (from
/proc: the server must run on this machine) is read around each statement. CPU, unlike
elapsed time, hardly moves with the load other sessions put on a shared machine. Prints the
median CPU per row of each layout and their ratio.

Usage: .venv/bin/python -m bench.storage_cpu --database-url postgres://…/<migrated scratch db>
    [--events 5000] [--rounds 5] [--streams scheduled,hot,shared-datasets]
"""

import argparse
import hashlib
import os
import statistics
from pathlib import Path

import orjson
import psycopg

from bench.common import migrated_django_without_broker
from bench.streams import STREAMS

VARIABLE = (
    "kind", "event_type", "run_id", "job_namespace", "job_name", "producer", "payload",
    "payload_raw", "digest", "derivation_status", "derivation_error", "facet_problems",
)  # fmt: skip
SETUP = [
    "DROP TABLE IF EXISTS cpu_new, cpu_old, cpu_src",
    "CREATE UNLOGGED TABLE cpu_src (payload text, digest bytea)",
    "CREATE TABLE cpu_new (LIKE ingest_event INCLUDING ALL)",
    "ALTER TABLE cpu_new SET (toast_tuple_target = 128)",
    "CREATE TABLE cpu_old (LIKE ingest_event INCLUDING ALL)",
    "ALTER TABLE cpu_old DROP COLUMN toast_pad",
    "ALTER TABLE cpu_old "
    + ", ".join(f"ALTER COLUMN {name} SET STORAGE EXTENDED" for name in VARIABLE),
]
INSERT = """
INSERT INTO {table} (kind, event_type, event_time, run_id, job_namespace, job_name, producer,
    payload, digest, derivation_status)
SELECT 'run', p ->> 'eventType', (p ->> 'eventTime')::timestamptz, p -> 'run' ->> 'runId',
       p -> 'job' ->> 'namespace', p -> 'job' ->> 'name', p ->> 'producer', p, digest, 'pending'
FROM (SELECT payload::jsonb AS p, digest FROM cpu_src) AS s
"""


def backend_cpu(connection: psycopg.Connection) -> float:
    pid = connection.info.backend_pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(connection: psycopg.Connection, stream: str, events: int, rounds: int) -> None:
    connection.execute("TRUNCATE cpu_src")
    documents = [orjson.dumps(event) for event in STREAMS[stream](0, events)]
    with connection.cursor().copy("COPY cpu_src (payload, digest) FROM STDIN") as copy:
        for document in documents:
            copy.write_row((document.decode(), hashlib.sha256(document).digest()))
    connection.execute("VACUUM ANALYZE cpu_src")
    per_row: dict[str, list[float]] = {"cpu_new": [], "cpu_old": []}
    for index in range(rounds):
        order = ["cpu_new", "cpu_old"] if index % 2 == 0 else ["cpu_old", "cpu_new"]
        for table in order:
            connection.execute(f"TRUNCATE {table}")
            before = backend_cpu(connection)
            connection.execute(INSERT.format(table=table))
            per_row[table].append((backend_cpu(connection) - before) / events * 1e6)
    new, old = (statistics.median(per_row[table]) for table in ("cpu_new", "cpu_old"))
    rounds_text = "; ".join(
        f"{table} " + ", ".join(f"{value:.0f}" for value in values)
        for table, values in per_row.items()
    )
    print(
        f"{stream:16} {events:,} rows, JSON "
        f"{sum(map(len, documents)) / events:.0f} B: backend CPU µs/row, median of {rounds}: "
        f"as migrated {new:.1f}, before ADR 0103 {old:.1f}, ratio {new / old:.2f} "
        f"({rounds_text})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--streams", default="scheduled,hot,shared-datasets")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    migrated_django_without_broker(args.database_url)
    with psycopg.connect(args.database_url, autocommit=True) as connection:
        for statement in SETUP:
            connection.execute(statement)
        for stream in args.streams.split(","):
            measure(connection, stream, args.events, args.rounds)
        connection.execute("DROP TABLE cpu_new, cpu_old, cpu_src")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()

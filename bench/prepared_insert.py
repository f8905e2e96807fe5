"""PostgreSQL's CPU per single-event INSERT, prepared once against parsed and planned each
time (ADR 0112).

One connection, autocommit, the statement ``ingest.services`` sends for one event into a
migrated ``ingest_event`` (its ten indexes, the digest's conflict, RETURNING), with the
bench's Spark events. Runs alternate (prepared first in every other pair) and each prints
the backend's CPU per event read from ``/proc/<pid>/schedstat`` (nanoseconds on a CPU,
which the machine's load moves less than a rate) and this process's thread CPU per event.
PostgreSQL must run on this host.

Usage: .venv/bin/python -m bench.prepared_insert [--events 1200] [--pairs 4]
It migrates a scratch database (lineage_bench_prepared) first.
"""

import argparse
import os
import time
from pathlib import Path

import psycopg

from bench.common import DEFAULT_CORPUS, load_templates, make_events, migrated_database
from bench.ingest import ceiling_rows


def rows(templates: list, count: int, seed: int) -> list[tuple]:
    """``_INSERT_ONE``'s parameters for ``count`` events: bench/ingest.py's ceiling rows
    (the same fields and digest), with the two columns the bare table has not as NULL and
    without its status."""
    bodies = list(make_events(templates, count, seed=seed))
    return [(*row[:8], None, row[8], None) for row in ceiling_rows(bodies)]


def backend_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def run(database_url: str, batch: list[tuple], prepare: bool) -> tuple[float, float]:
    """(backend µs, client thread µs) per event for ``batch``, prepared or not."""
    from ingest.services import _INSERT_ONE

    # A threshold no statement reaches: only what asks (prepare=True) is prepared, as in
    # ingest.services; None (Django's) would prepare nothing at all.
    with psycopg.connect(database_url, autocommit=True, prepare_threshold=2**62) as connection:
        pid = connection.info.backend_pid
        cursor = connection.cursor()
        before, client = backend_ns(pid), time.thread_time()
        for row in batch:
            cursor.execute(_INSERT_ONE, row, prepare=prepare)
            cursor.fetchall()
        backend, client = backend_ns(pid) - before, time.thread_time() - client
        prepared = connection.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
        assert prepared is not None and (prepared[0] > 0) == prepare
    return backend / len(batch) / 1e3, client / len(batch) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1200)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_prepared"
    )
    args = parser.parse_args()
    os.environ.update(migrated_database(args.database_url))
    import django

    django.setup()
    templates = load_templates(DEFAULT_CORPUS)
    figures: dict[bool, list[float]] = {True: [], False: []}
    for pair in range(args.pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)
        for number, prepare in enumerate(order):
            batch = rows(templates, args.events, seed=100 * pair + number)
            backend, client = run(args.database_url, batch, prepare)
            figures[prepare].append(backend)
            print(
                f"pair {pair + 1} {'prepared  ' if prepare else 'unprepared'}: backend "
                f"{backend:5.0f} µs/event, client thread {client:4.0f} µs/event, "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for prepare, values in figures.items():
        label = "prepared  " if prepare else "unprepared"
        print(f"{label}: backend {min(values):.0f}-{max(values):.0f} µs/event")


if __name__ == "__main__":
    main()

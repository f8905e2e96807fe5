"""Scale-out: how much more two derivation workers derive than one.

On a scratch database (recreated), stores --events of a stream (bench/streams.py), then
derives them from an empty catalog with 1 worker, resets the catalog (as `manage.py
rederive` does: truncate the derived tables, mark every event pending), and derives them
again with --workers worker processes at once. Each worker is its own process and
connection running the sweep's loop (claim up to 500 pending events with FOR UPDATE SKIP
LOCKED, derive, commit), which is what a Celery worker process does per task. Prints
both rates and their ratio (issue 11's target: >= 1.7 for two workers), and the load
average around them: on a busy machine the second worker has no core of its own.

Usage: .venv/bin/python -m bench.derive_workers [--stream shared-datasets] [--events 20000]
       [--workers 2]
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_workers"


def _worker() -> None:
    """One worker: derive batches until nothing is pending; print how many."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from catalog.services.derivation.batch import derive_pending_batch

    derived = 0
    while True:
        result = derive_pending_batch(0, 500)
        derived += result.derived
        if result.claimed == 0:
            break
    print(derived, flush=True)


def _derive_with(workers: int, database_url: str) -> tuple[float, int]:
    env = dict(os.environ, DATABASE_URL=database_url)
    command = [sys.executable, "-m", "bench.derive_workers", "--worker"]
    began = time.perf_counter()
    children = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    counts = [int(child.communicate()[0].strip() or 0) for child in children]
    return time.perf_counter() - began, sum(counts)


def _reset() -> None:
    from django.db import connection, transaction

    from catalog.services import derived_tables

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"TRUNCATE {', '.join(derived_tables())}")
        cursor.execute(
            "UPDATE ingest_event SET derivation_status = 'pending', derived_at = NULL, "
            "derivation_error = NULL"
        )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument(
        "--stream", default="shared-datasets", choices=["shared-datasets", "fleet", "hot"]
    )
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        _worker()
        return

    from bench.derive import _setup

    _setup(options.database_url)
    from bench.streams import records
    from ingest.services import record_events

    for start in range(0, options.events, 1000):
        record_events(records(options.stream, start, min(1000, options.events - start)))
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    load_before = os.getloadavg()[0]
    one, derived_one = _derive_with(1, options.database_url)
    _reset()
    many, derived_many = _derive_with(options.workers, options.database_url)
    load_after = os.getloadavg()[0]
    assert derived_one == derived_many == options.events, (derived_one, derived_many)
    rate_one, rate_many = options.events / one, options.events / many
    print(
        f"{options.stream}, {options.events:,} events: 1 worker {rate_one:,.0f} events/s, "
        f"{options.workers} workers {rate_many:,.0f} events/s: "
        f"ratio {rate_many / rate_one:.2f} (target >= 1.7 for 2); "
        f"1-minute load average {load_before:.1f} before, {load_after:.1f} after "
        f"({os.cpu_count()} CPUs; other work on the machine skews the ratio)"
    )


if __name__ == "__main__":
    main()

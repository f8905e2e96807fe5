"""Scale-out: how much more two derivation workers derive than one.

On a scratch database (recreated), stores --events of a stream (bench/streams.py), then
derives them from an empty catalog with 1 worker, resets the catalog (as `manage.py
rederive` does: truncate the derived tables, mark every event pending), and derives them
again with --workers worker processes at once. Each worker is its own process and
connection running the sweep's loop (claim up to 500 pending events with FOR UPDATE SKIP
LOCKED, derive, commit), which is what a Celery worker process does per task. Prints
both rates and their ratio (issue 11's target: >= 1.7 for two workers), and the load
average around them: on a busy machine the second worker has no core of its own.

It also prints where the CPU goes: the machine's busy CPU per event (from /proc/stat:
workers, PostgreSQL and everything else) and the workers' own share. With the database on
the same cores, N workers cannot derive more than cores / (busy CPU per event), whatever
the locking does; the ratio that bound allows is printed beside the measured one.

Usage: .venv/bin/python -m bench.derive_workers [--stream shared-datasets] [--events 20000]
       [--workers 2]
"""

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import machine_busy_cpu_seconds  # noqa: E402

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


class Phase:
    """One derivation from an empty catalog: wall time, events and CPU seconds."""

    def __init__(self, workers: int, database_url: str) -> None:
        env = dict(os.environ, DATABASE_URL=database_url)
        command = [sys.executable, "-m", "bench.derive_workers", "--worker"]
        busy, own = machine_busy_cpu_seconds(), _children_cpu_seconds()
        began = time.perf_counter()
        children = [
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
            for _ in range(workers)
        ]
        self.events = sum(int(child.communicate()[0].strip() or 0) for child in children)
        self.seconds = time.perf_counter() - began
        self.busy = machine_busy_cpu_seconds() - busy
        self.workers_cpu = _children_cpu_seconds() - own

    def rate(self) -> float:
        return self.events / self.seconds

    def cpu_ms(self) -> str:
        return (
            f"{1000 * self.busy / self.events:.2f} ms busy CPU/event, "
            f"{1000 * self.workers_cpu / self.events:.2f} ms of it in workers"
        )


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reset() -> None:
    from django.db import connection, transaction

    from catalog.services.derive import derived_tables

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
    one = Phase(1, options.database_url)
    _reset()
    many = Phase(options.workers, options.database_url)
    load_after = os.getloadavg()[0]
    assert one.events == many.events == options.events, (one.events, many.events)
    cores = os.cpu_count() or 1
    # The most N workers could derive if every core were busy at one worker's CPU per event.
    allowed = min(options.workers * one.rate(), cores * one.events / one.busy) / one.rate()
    print(
        f"{options.stream}, {options.events:,} events: 1 worker {one.rate():,.0f} events/s, "
        f"{options.workers} workers {many.rate():,.0f} events/s: "
        f"ratio {many.rate() / one.rate():.2f} (target >= 1.7 for 2); "
        f"1-minute load average {load_before:.1f} before, {load_after:.1f} after "
        f"({cores} CPUs; other work on the machine skews the ratio)\n"
        f"  1 worker: {one.cpu_ms()}\n"
        f"  {options.workers} workers: {many.cpu_ms()}\n"
        f"  at 1 worker's CPU per event, {cores} cores allow at most a ratio of "
        f"{allowed:.2f}"
    )


if __name__ == "__main__":
    main()

"""Deriving one job's history: seconds per 1,000 events as the job's runs pile up.

Issue: N runs of one job, each writing the same dataset and nothing else, cost more per
event as N grows. For each N of --runs, on a scratch database made anew: store the N runs'
events (START and COMPLETE, an hour apart per run, one output with a schema), derive them
through the derive task's function (``catalog.services.derive.derive_events``, batches of
500), then re-derive them all (``rederive_event_ids``, as a steward's re-derive does), and
print each pass's seconds and CPU (this process plus its PostgreSQL backend) per 1,000
events. Flat per-event figures across N are the target; nothing is asserted.

Each pass also prints the milliseconds the run changes' ``_ADDED`` statement took per 1,000
events (timed around each execute). With --added, the job's runs also read a table, and
another job wrote the dataset first: the job's edge is then an edge added after the
dataset's first one, whose first run ``_ADDED`` finds on every batch (ADR 0185); without
it the job's edge is the dataset's first and ``_ADDED`` reads none of its runs.

Usage: .venv/bin/python -m bench.one_job [--runs 1000,2000,4000,8000] [--no-rederive] [--added]
"""

import argparse
import os
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_one_job"
START = datetime(2020, 1, 1, tzinfo=UTC)
PRODUCER = "https://github.com/lineage-catalog/bench"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/x.json"}


def _run(
    run_id: str, job: str, at: datetime, inputs: list[str], schema: dict[str, Any]
) -> list[dict[str, Any]]:
    """A run's START and COMPLETE, ten minutes apart, writing mart/daily from ``inputs``."""
    return [
        {
            "eventType": kind,
            "eventTime": (at + timedelta(minutes=step * 10)).isoformat(),
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
            "run": {"runId": run_id, "facets": {}},
            "job": {"namespace": "scheduler", "name": job, "facets": {}},
            "inputs": [{"namespace": "s3://lake", "name": name} for name in inputs],
            "outputs": [
                {"namespace": "s3://lake", "name": "mart/daily", "facets": {"schema": schema}}
            ],
        }
        for step, kind in enumerate(("START", "COMPLETE"))
    ]


def events(runs: int, added: bool = False) -> list[dict[str, Any]]:
    """Two events (START, COMPLETE) of each of ``runs`` runs of one job writing one table;
    with ``added``, each run reads raw/events, after one run of another job wrote the table
    from raw/seed a day before (the dataset's first upstream edge)."""
    schema = {**FACET, "fields": [{"name": n, "type": "STRING"} for n in ("id", "value")]}
    out = []
    if added:
        seed = str(uuid.UUID(int=(8 << 96), version=4))
        out.extend(_run(seed, "seed.load", START - timedelta(days=1), ["raw/seed"], schema))
    for run in range(runs):
        run_id = str(uuid.UUID(int=(7 << 96) | run, version=4))
        inputs = ["raw/events"] if added else []
        out.extend(_run(run_id, "daily.load", START + timedelta(hours=run), inputs, schema))
    return out


class StatementClock:
    """Seconds spent executing one statement's text (``connection.execute_wrapper``)."""

    def __init__(self, sql: str) -> None:
        self.sql, self.seconds, self.calls = sql, 0.0, 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql != self.sql:
            return execute(sql, params, many, context)
        began = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - began
            self.calls += 1

    def lap(self) -> float:
        """The seconds since the last lap."""
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(action: Any, backend: int) -> tuple[float, float]:
    began, cpu = time.perf_counter(), time.process_time() + _cpu_seconds(backend)
    action()
    return time.perf_counter() - began, time.process_time() + _cpu_seconds(backend) - cpu


def _vacuum(cursor: Any) -> None:
    """What autovacuum would have done: the database's own tables only (a database-wide
    VACUUM also takes the shared catalogs, and waits on other databases' sessions)."""
    cursor.execute(
        "SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE schemaname = 'public'"
    )
    cursor.execute(f"VACUUM (ANALYZE) {cursor.fetchone()[0]}")


def _derive(ids: list[int], batch: int) -> None:
    from catalog.services import derive

    for start in range(0, len(ids), batch):
        derive.derive_events(ids[start : start + batch])


def one(database_url: str, runs: int, rederive: bool, batch: int, added: bool) -> None:
    """Measure one N in this process, on ``database_url`` made anew and migrated."""
    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(database_url)
    from django.db import connection

    from catalog.services.derivation import run_changes
    from catalog.services.rederive_jobs import rederive_event_ids
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    records = [validate_openlineage(event) for event in events(runs, added)]
    ids: list[int] = []
    for start in range(0, len(records), 1000):
        ids.extend(stored.id for stored in record_events(records[start : start + 1000]))
    with connection.cursor() as cursor:
        _vacuum(cursor)
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    per = 1000 / len(ids)
    added_clock = StatementClock(run_changes._ADDED)
    with connection.execute_wrapper(added_clock):
        wall, cpu = timed(lambda: _derive(ids, batch), backend)
        line = (
            f"N={runs:>6,} runs, {len(ids):>6,} events: "
            f"derive {wall * per:6.2f} s/1k ({cpu * per:6.2f} s CPU/1k, "
            f"_ADDED {added_clock.lap() * 1000 * per:6.1f} ms/1k)"
        )
        if rederive:
            with connection.cursor() as cursor:
                _vacuum(cursor)
            wall, cpu = timed(lambda: rederive_event_ids(ids), backend)
            line += (
                f", rederive {wall * per:6.2f} s/1k ({cpu * per:6.2f} s CPU/1k, "
                f"_ADDED {added_clock.lap() * 1000 * per:6.1f} ms/1k)"
            )
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument("--runs", default="1000,2000,4000,8000")
    parser.add_argument("--no-rederive", action="store_true")
    parser.add_argument(
        "--added", action="store_true", help="the job's edge is added after the dataset's first"
    )
    parser.add_argument("--batch", type=int, default=500, help="event ids per derive_events call")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:  # one N (Django binds one database per process)
        one(
            options.database_url,
            options.child,
            not options.no_rederive,
            options.batch,
            options.added,
        )
        return
    import subprocess

    for runs in options.runs.split(","):
        command = [
            sys.executable, "-m", "bench.one_job", "--child", runs,
            "--database-url", options.database_url, "--batch", str(options.batch),
            *(["--no-rederive"] if options.no_rederive else []),
            *(["--added"] if options.added else []),
        ]  # fmt: skip
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parent.parent)


if __name__ == "__main__":
    main()

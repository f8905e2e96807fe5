"""Where derivation time goes as the store grows: the same 500 events at several store sizes.

On a scratch database (recreated), stores and derives the history of a stream (bench/
streams.py) up to each --sizes point, then derives one probe batch (the same 500 events
every time, stored once, placed far after the history in the stream) twice, both rolled
back so the probe stays pending for the next size:
  1. every SQL statement is first run under EXPLAIN (ANALYZE, BUFFERS) in a savepoint;
     prints, per statement, its execution time and shared buffers touched, and writes the
     plans to --plans DIR/<stream>-<size>.txt;
  2. under pyinstrument (wall clock), printing the profile's text tree to the same folder.
Then a table of each statement's time at every size: a term whose time grows with the
store is one to fix (docs/adr/0025-derivation-cost-independent-of-history.md).

Usage: .venv/bin/python -m bench.derive_profile [--stream shared-datasets] [--sizes 10000,200000]
"""

import argparse
import os
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

PROBE = 500
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_profile"


class _Rollback(Exception):
    pass


def _statement_key(sql: str) -> str:
    text = " ".join(sql.split())
    return re.sub(r"\s+", " ", text)[:90]


class Explainer:
    """An execute wrapper: EXPLAIN (ANALYZE, BUFFERS) each statement in a savepoint first."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)
        self.buffers: dict[str, int] = defaultdict(int)
        self.calls: dict[str, int] = defaultdict(int)
        self.plans: list[str] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if not many and verb in {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"}:
            raw = context["connection"].connection
            with raw.cursor() as cursor:
                cursor.execute("SAVEPOINT bench_explain")
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
                plan = cursor.fetchone()[0][0]
                cursor.execute("ROLLBACK TO SAVEPOINT bench_explain")
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
                text = "\n".join(row[0] for row in cursor.fetchall())
                cursor.execute("ROLLBACK TO SAVEPOINT bench_explain")
            key = _statement_key(sql)
            self.times[key] += plan["Execution Time"]
            top = plan["Plan"]
            self.buffers[key] += top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
            self.calls[key] += 1
            self.plans.append(f"-- {key}\n{sql.strip()}\n{text}\n")
        return execute(sql, params, many, context)


def _store(stream: str, start: int, count: int) -> list[int]:
    from bench.streams import records
    from ingest.services import record_events

    ids = []
    for offset in range(start, start + count, 1000):
        stored = record_events(records(stream, offset, min(1000, start + count - offset)))
        ids.extend(event.id for event in stored)
    return ids


def _derive_ids(ids: list[int]) -> float:
    from catalog.services.derivation.batch import derive_event_ids

    began = time.perf_counter()
    derive_event_ids(ids)
    return time.perf_counter() - began


def _probe(ids: list[int], explain: Explainer | None) -> float:
    from django.db import connection, transaction

    from catalog.services.derivation.batch import derive_event_ids

    began = time.perf_counter()
    try:
        with transaction.atomic():
            if explain is None:
                derive_event_ids(ids)
            else:
                with connection.execute_wrapper(explain):
                    derive_event_ids(ids)
            raise _Rollback
    except _Rollback:
        pass
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument(
        "--stream", default="shared-datasets", choices=["shared-datasets", "fleet", "hot"]
    )
    parser.add_argument("--sizes", default="10000,200000")
    parser.add_argument("--plans", default="/tmp/derive-profile")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    out = Path(options.plans)
    out.mkdir(parents=True, exist_ok=True)

    from bench.derive import _setup

    _setup(options.database_url)
    from django.db import connection
    from pyinstrument import Profiler

    # The probe: 500 events far beyond the history (same jobs and datasets, new runs).
    probe_ids = _store(options.stream, 10_000_000, PROBE)
    done = 0
    results: dict[int, Explainer] = {}
    for size in sizes:
        ids = _store(options.stream, done, size - done)
        elapsed = _derive_ids(ids)
        print(f"history {done:,} → {size:,}: derived at {len(ids) / elapsed:,.0f} events/s")
        done = size
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")  # as autovacuum would have by then
        _probe(probe_ids, None)  # warm the caches
        plain = min(_probe(probe_ids, None) for _ in range(3))
        explain = Explainer()
        _probe(probe_ids, explain)
        results[size] = explain
        profiler = Profiler(interval=0.0005)
        profiler.start()
        _probe(probe_ids, None)
        profiler.stop()
        (out / f"{options.stream}-{size}.txt").write_text("\n".join(explain.plans))
        (out / f"{options.stream}-{size}-pyinstrument.txt").write_text(
            profiler.output_text(unicode=False, color=False, show_all=False)
        )
        print(f"  probe of {PROBE} events at {size:,} stored: {plain * 1000:.0f} ms")

    keys = sorted(
        set().union(*(result.times for result in results.values())),
        key=lambda key: -results[sizes[-1]].times.get(key, 0),
    )
    print("\nper statement, probe batch: ms (shared buffers) at " + ", ".join(map(str, sizes)))
    for key in keys:
        figures = ", ".join(
            f"{results[size].times.get(key, 0):8.1f} ({results[size].buffers.get(key, 0):>6})"
            for size in sizes
        )
        print(f"{figures} x{results[sizes[-1]].calls.get(key, 0):<3} {key}")
    print(f"\nplans and profiles in {out}")
    os.environ.pop("DATABASE_URL", None)


if __name__ == "__main__":
    main()

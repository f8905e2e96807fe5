"""Retention on a big store while ingest, graph reads and derivation go on (ADR 0079).

Builds bench/read.py's generated store (--events raw events, default 1,000,000; datasets,
jobs, 100,000 runs, and long-history edges of --runs-per-edge runs each), ages half of it
(the older half of the events received a year and a half ago, every other run last
derived then), and starts the shipped web server (config/server.py) and a deriving
process. Then, for --seconds each, twice: idle (no retention) and during
``manage.py retention --days 365``:
  ingest  POST /api/v1/lineage of a real Spark event (~3 KB), one after another
  graph   GET /api/v1/lineage/graph?node=dataset:<random>&depth=3
while a sampler (every 50 ms) reads pg_locks and pg_stat_activity. It prints:
- the retention run's duration and what it removed;
- the longest any transaction held a lock on ingest_event or the edge tables (retention's
  and everyone else's), and the strongest lock mode retention took on them;
- ingest and graph p95 idle and during the run, and their ratio (target <= 1.5);
- how often the deriving process waited on a lock during the run;
- table and index sizes before, after the run, and after autovacuum had a chance
  (autovacuum is switched on for the run with ALTER SYSTEM, and reset after).

  .venv/bin/python -m bench.retention --events 1000000 [--seconds 60] [--reuse]
"""

import argparse
import http.client
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    BIN,
    DEFAULT_CORPUS,
    ROOT,
    load_templates,
    make_events,
    new_token,
    percentile,
    running_server,
)
from bench.read import add_store_arguments, built_read_store

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_retention"
TABLES = [
    "ingest_event",
    "catalog_run_dataset",
    "catalog_run",
    "catalog_lineage_edge",
    "catalog_lineage_edge_run",
    "catalog_job_edge",
    "catalog_job_edge_run",
    "catalog_retained_edge",
    "catalog_retained_job_edge",
]
WATCHED = ("ingest_event", "catalog_lineage_edge", "catalog_lineage_edge_run")
AGE = """
UPDATE ingest_event SET received_at = received_at - interval '540 days'
WHERE id <= (SELECT max(id) / 2 FROM ingest_event);
UPDATE catalog_run SET updated_at = updated_at - interval '540 days' WHERE id % 2 = 0;
"""
# The deriving process: what a worker does, all the time (the sweep without its delay).
DERIVE = """
import time, django
django.setup()
from catalog.services.derive import sweep_underived
while True:
    if not sweep_underived(older_than_seconds=0, time_budget_seconds=1).claimed:
        time.sleep(0.05)
"""
LOCKS = f"""
SELECT a.pid, a.application_name, a.xact_start, now() - a.xact_start, l.mode,
       a.wait_event_type, l.locktype
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.relation = ANY(ARRAY[{", ".join(f"'{table}'::regclass" for table in WATCHED)}])
  AND a.datname = current_database() AND a.pid <> pg_backend_pid()
"""
WAITING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = 'bench-derive'
  AND wait_event_type = 'Lock'
"""
MODES = [
    "AccessShareLock",
    "RowShareLock",
    "RowExclusiveLock",
    "ShareUpdateExclusiveLock",
    "ShareLock",
    "ShareRowExclusiveLock",
    "ExclusiveLock",
    "AccessExclusiveLock",
]


def sizes(database_url: str) -> dict[str, tuple[int, int, int, int]]:
    """Per table: (heap bytes, index bytes, live rows, dead rows)."""
    with psycopg.connect(database_url) as connection:
        return {
            table: connection.execute(
                "SELECT pg_relation_size(%s::regclass), pg_indexes_size(%s::regclass),"
                " n_live_tup, n_dead_tup FROM pg_stat_user_tables WHERE relname = %s",
                [table, table, table],
            ).fetchone()
            for table in TABLES
        }


class Sampler(threading.Thread):
    """Every 50 ms: how long each transaction holding a lock on the watched tables has
    been open, and whether the deriving process waits on a lock."""

    def __init__(self, database_url: str) -> None:
        super().__init__(daemon=True)
        self.database_url = database_url
        self.stop = threading.Event()
        self.longest: dict[str, float] = {}  # application → longest transaction seen
        self.modes: set[str] = set()  # retention's lock modes on the watched tables
        self.samples = 0
        self.derive_waiting = 0

    def run(self) -> None:
        with psycopg.connect(self.database_url, autocommit=True) as connection:
            while not self.stop.is_set():
                for _, application, _, open_for, mode, _, kind in connection.execute(LOCKS):
                    name = "retention" if application == "bench-retention" else "others"
                    seconds = open_for.total_seconds() if open_for else 0.0
                    self.longest[name] = max(self.longest.get(name, 0.0), seconds)
                    # Table locks only: relation-extension and tuple locks (ExclusiveLock,
                    # held briefly) name the relation too.
                    if name == "retention" and kind == "relation":
                        self.modes.add(mode)
                self.derive_waiting += connection.execute(WAITING).fetchone()[0] > 0
                self.samples += 1
                time.sleep(0.05)


EVENTS: list[bytes] = []  # made once, before the first phase (making them is slow)


def load(url: str, token: str, read_token: str, datasets: int, stop: threading.Event) -> dict:
    """Ingest and graph reads, one after another each, until ``stop``; latencies in ms."""
    events = iter(EVENTS)
    latencies: dict[str, list[float]] = {"ingest": [], "graph": []}

    def ingest() -> None:
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        while not stop.is_set():
            started = time.perf_counter()
            connection.request(
                "POST",
                "/api/v1/lineage",
                body=next(events),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            response = connection.getresponse()
            response.read()
            if response.status not in (200, 201):
                raise SystemExit(f"ingest answered {response.status}")
            latencies["ingest"].append((time.perf_counter() - started) * 1000)

    def graph() -> None:
        rng = random.Random(11)
        connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
        while not stop.is_set():
            node = rng.randint(1, datasets)
            started = time.perf_counter()
            connection.request(
                "GET",
                f"/api/v1/lineage/graph?node=dataset:{node}&direction=both&depth=3&max_nodes=200",
                headers={"Authorization": f"Bearer {read_token}"},
            )
            response = connection.getresponse()
            response.read()
            latencies["graph"].append((time.perf_counter() - started) * 1000)

    threads = [threading.Thread(target=ingest), threading.Thread(target=graph)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def measured(
    url: str, tokens: tuple[str, str], datasets: int, seconds: float, during: Any
) -> tuple[dict, Any]:
    """Latencies under load for ``seconds`` (or as long as ``during`` runs, if longer)."""
    stop = threading.Event()
    result: dict = {}
    loader = threading.Thread(target=lambda: result.update(load(url, *tokens, datasets, stop)))
    loader.start()
    started = time.monotonic()
    outcome = during() if during else None
    time.sleep(max(0.0, seconds - (time.monotonic() - started)))
    stop.set()
    loader.join()
    return result, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=1_000_000, datasets=100_000)
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--seconds", type=float, default=60.0, help="idle phase length")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--time-budget", type=float, default=2.0, help="seconds per batch")
    parser.add_argument("--reuse", action="store_true", help="keep the built store as it is")
    options = parser.parse_args()
    env, read_token = built_read_store(options.database, options, "aged to retention")
    token = new_token(env, "ingest")
    EVENTS.extend(
        make_events(load_templates(DEFAULT_CORPUS), 50_000, seed=random.randrange(1 << 30))
    )
    if not options.reuse:
        with psycopg.connect(options.database, autocommit=True) as connection:
            connection.execute(AGE)
            connection.execute("VACUUM ANALYZE")
    with psycopg.connect(options.database, autocommit=True) as connection:
        connection.execute("ALTER SYSTEM SET autovacuum = on")
        connection.execute("SELECT pg_reload_conf()")
    deriver = None
    try:
        before = sizes(options.database)
        with running_server(env, start_seconds=180) as url:
            deriver = subprocess.Popen(
                [str(BIN / "python"), "-c", DERIVE],
                cwd=ROOT,
                env={**env, "PGAPPNAME": "bench-derive"},
            )
            tokens = (token, read_token)
            idle, _ = measured(url, tokens, options.datasets, options.seconds, None)
            sampler = Sampler(options.database)
            sampler.start()

            def retention() -> tuple[float, str]:
                started = time.monotonic()
                output = subprocess.run(
                    [
                        str(BIN / "python"),
                        "manage.py",
                        "retention",
                        "--days",
                        "365",
                        "--batch-size",
                        str(options.batch_size),
                        "--time-budget",
                        str(options.time_budget),
                    ],
                    cwd=ROOT,
                    env={**env, "PGAPPNAME": "bench-retention"},
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                return time.monotonic() - started, output.strip()

            busy, (duration, output) = measured(url, tokens, options.datasets, 0.0, retention)
            sampler.stop.set()
            sampler.join()
        after = sizes(options.database)
        time.sleep(70)  # the autovacuum launcher visits each database about once a minute
        vacuumed = sizes(options.database)
    finally:
        if deriver is not None:
            deriver.terminate()
            deriver.wait(timeout=30)
        with psycopg.connect(options.database, autocommit=True) as connection:
            connection.execute("ALTER SYSTEM RESET autovacuum")
            connection.execute("SELECT pg_reload_conf()")

    print(f"load average: {os.getloadavg()[0]:.1f} (1 min) at the end")
    print(f"retention: {duration:.1f}s; {output}")
    print(
        "longest transaction holding a lock on the event or edge tables: retention "
        f"{sampler.longest.get('retention', 0.0) * 1000:.0f} ms, others "
        f"{sampler.longest.get('others', 0.0) * 1000:.0f} ms; retention's strongest mode: "
        f"{max(sampler.modes, key=MODES.index) if sampler.modes else '-'}"
    )
    print(f"derivation waiting on a lock: {sampler.derive_waiting} of {sampler.samples} samples")
    for name in ("ingest", "graph"):
        quiet, loaded = percentile(idle[name], 0.95), percentile(busy[name], 0.95)
        print(
            f"{name:6s} p95 idle {quiet:7.1f} ms ({len(idle[name])} requests), during "
            f"{loaded:7.1f} ms ({len(busy[name])}): {loaded / quiet:.2f}x"
        )
    print("table: heap MB / index MB / live rows / dead rows: before | after | after autovacuum")
    for table in TABLES:
        print(
            f"{table:26s} "
            + " | ".join(
                f"{state[table][0] / 2**20:.1f} / {state[table][1] / 2**20:.1f} / "
                f"{state[table][2]:,} / {state[table][3]:,}"
                for state in (before, after, vacuumed)
            )
        )


if __name__ == "__main__":
    main()

"""Soak: sustained mixed load on the whole system, with latency, errors, lag and memory.

Starts its own system on a scratch database (the shipped web server, granian with the
production settings and config/server.py's defaults, one Celery worker, Celery beat), then
for --duration seconds runs at once:
  - single-event ingest: the requests the official openlineage-python HTTP transport
    sends (gzip, API key), built by it before the clock starts and sent over kept-alive
    connections (bench/senders.py: on two cores the client's own CPU was 17 % of the
    machine, taken from the system it measured);
  - batch ingest (100 events per POST to /api/v1/lineage/batch, gzip);
  - read API traffic: dataset list, dataset detail, lineage graph (depth 3), search,
    events page;
and every --sample seconds records the derivation backlog and lag and the resident
memory of the web and worker process trees. Prints throughput, p50/p95/p99 latency and
error counts per operation, the lag and memory series, and whether memory kept growing.
If the PostgreSQL server runs with autovacuum off, the soak does autovacuum's work itself
(its thresholds, once a minute) and says so.

Usage: .venv/bin/python -m bench.soak [--duration 600] [--ingest-rate 150] [--read-rate 30]
Only 127.0.0.1 is contacted; every request loop stops at the deadline.
"""

import argparse
import gzip
import itertools
import math
import os
import random
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path

import orjson
import psutil
import psycopg
import redis

from bench.common import (
    BIN,
    DEFAULT_CORPUS,
    ROOT,
    free_port,
    load_templates,
    machine_busy_cpu_seconds,
    make_events,
    migrated_database,
    new_token,
    percentile,
    tree_cpu_seconds,
)
from bench.senders import Connection, openlineage_requests
from scripts.run_local import web_command

# What the readers search for, one misspelt (bench/read_cpu.py reads the same).
SEARCH_WORDS = ["orders", "shakespeare", "wordcount", "bigquery", "spark", "ordrs", "table"]


class Shared:
    """Items handed out to several sender threads in turn, from the start again at the end."""

    def __init__(self, items: list) -> None:
        self.items = itertools.cycle(items)
        self.lock = threading.Lock()

    def __next__(self):
        with self.lock:
            return next(self.items)


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.events = 0

    def record(self, operation: str, seconds: float, error: str | None = None) -> None:
        with self.lock:
            self.latencies[operation].append(seconds)
            if error:
                self.errors[operation].append(error)


def paced(rate: float, deadline: float):
    """Yield at ``rate`` per second until ``deadline`` (never faster, skips if behind)."""
    interval = 1.0 / rate
    next_at = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline:
            return
        if now < next_at:
            time.sleep(next_at - now)
        next_at = max(next_at + interval, time.monotonic() - interval)
        yield


def ingest_single(url: str, prepared, rate: float, deadline: float, rec: Recorder):
    """openlineage-python's requests (bench.senders), sent at ``rate``; answers 200/201."""
    connection = Connection(url, timeout=10.0)
    for _ in paced(rate, deadline):
        path, body, headers = next(prepared)
        started = time.perf_counter()
        try:
            status, _ = connection.request("POST", path, body, headers)
            error = None if status in (200, 201) else str(status)
        except Exception as exception:  # recorded as an error, never hidden
            error = type(exception).__name__
        rec.record("ingest single (openlineage-python)", time.perf_counter() - started, error)
        with rec.lock:
            rec.events += 1


def ingest_batch(url: str, token: str, bodies, every: float, deadline: float, rec: Recorder):
    connection = Connection(url, timeout=30.0)
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    for _ in paced(1.0 / every, deadline):
        body = gzip.compress(b"[" + b",".join(next(bodies) for _ in range(100)) + b"]")
        started = time.perf_counter()
        try:
            status, answer = connection.request("POST", "/api/v1/lineage/batch", body, headers)
            ok = status == 200 and orjson.loads(answer)["summary"]["failed"] == 0
            error = None if ok else f"{status} {answer[:100]!r}"
        except Exception as exception:
            error = type(exception).__name__
        rec.record("ingest batch of 100", time.perf_counter() - started, error)
        with rec.lock:
            rec.events += 100


def reads(url: str, token: str, rate: float, deadline: float, rec: Recorder, seed: int):
    connection = Connection(url, timeout=30.0)
    headers = {"Authorization": f"Bearer {token}"}
    rng = random.Random(seed)
    dataset_ids: list[int] = []
    for _ in paced(rate, deadline):
        if not dataset_ids or rng.random() < 0.05:
            path = "/api/v1/datasets?limit=50"
            operation = "read dataset list"
        else:
            choice = rng.random()
            dataset = rng.choice(dataset_ids)
            if choice < 0.3:
                path, operation = f"/api/v1/datasets/{dataset}", "read dataset detail"
            elif choice < 0.6:
                path = f"/api/v1/lineage/graph?node=dataset:{dataset}&direction=both&depth=3"
                operation = "read lineage graph depth 3"
            elif choice < 0.85:
                path, operation = f"/api/v1/search?q={rng.choice(SEARCH_WORDS)}", "read search"
            else:
                path, operation = "/api/v1/events?limit=50", "read events page"
        started = time.perf_counter()
        try:
            status, answer = connection.request("GET", path, headers=headers)
            error = None if status == 200 else str(status)
            if operation == "read dataset list" and status == 200:
                dataset_ids = [item["id"] for item in orjson.loads(answer).get("results", [])]
        except Exception as exception:
            error = type(exception).__name__
        rec.record(operation, time.perf_counter() - started, error)


def tree_rss(process: subprocess.Popen) -> int:
    try:
        root = psutil.Process(process.pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
    except psutil.NoSuchProcess:
        return 0


def cpu_now(web, worker, beat) -> dict[str, float]:
    """Where the machine's CPU has gone so far: the load generator (this process), the web,
    worker and beat trees, and everything busy on the machine."""
    return {
        "machine": machine_busy_cpu_seconds(),
        "load generator": time.process_time(),
        "web": tree_cpu_seconds(web.pid),
        "worker": tree_cpu_seconds(worker.pid),
        "beat": tree_cpu_seconds(beat.pid),
    }


def sample(
    database_url: str, redis_url: str, web, worker, every: float, deadline: float, out: list
):
    started = time.monotonic()
    broker = redis.Redis.from_url(redis_url)
    with psycopg.connect(database_url, autocommit=True) as connection:
        while time.monotonic() < deadline + every:
            pending, oldest = connection.execute(
                "SELECT count(*), EXTRACT(EPOCH FROM now() - min(received_at)) "
                "FROM ingest_event WHERE derivation_status = 'pending'"
            ).fetchone()
            lag_row = connection.execute(
                "SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM "
                "derived_at - received_at)) FROM ingest_event "
                "WHERE derived_at > now() - make_interval(secs => %s)",
                [every],
            ).fetchone()
            out.append(
                {
                    "t": time.monotonic() - started,
                    "pending": pending,
                    "oldest_pending_s": float(oldest or 0),
                    "lag_p95_s": float(lag_row[0] or 0),
                    # Derive tasks waiting in the broker: events can be derived while the
                    # tasks that name them queue up (each drains what is pending).
                    "queued_tasks": int(broker.llen("lineage")),
                    "web_rss_mb": tree_rss(web) / 2**20,
                    "worker_rss_mb": tree_rss(worker) / 2**20,
                }
            )
            time.sleep(every)


# Autovacuum's policy: per table, its own settings (ingest_event has some, migration
# ingest 0003) or the server's defaults; counts against the table's reltuples.
NAPTIME_S = 60
_DUE = """
SELECT s.relname,
  s.n_dead_tup > o.vacuum_threshold + o.vacuum_scale * o.tuples
    OR s.n_ins_since_vacuum > o.insert_threshold + o.insert_scale * o.tuples,
  s.n_mod_since_analyze > o.analyze_threshold + o.analyze_scale * o.tuples
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
CROSS JOIN LATERAL (
  SELECT greatest(c.reltuples, 0) AS tuples,
    coalesce(max(option_value) FILTER (WHERE option_name = 'autovacuum_vacuum_threshold')::float,
             50) AS vacuum_threshold,
    coalesce(max(option_value) FILTER (WHERE option_name = 'autovacuum_vacuum_scale_factor')
             ::float, 0.2) AS vacuum_scale,
    coalesce(max(option_value) FILTER (WHERE option_name =
             'autovacuum_vacuum_insert_threshold')::float, 1000) AS insert_threshold,
    coalesce(max(option_value) FILTER (WHERE option_name =
             'autovacuum_vacuum_insert_scale_factor')::float, 0.2) AS insert_scale,
    coalesce(max(option_value) FILTER (WHERE option_name = 'autovacuum_analyze_threshold')
             ::float, 50) AS analyze_threshold,
    coalesce(max(option_value) FILTER (WHERE option_name = 'autovacuum_analyze_scale_factor')
             ::float, 0.1) AS analyze_scale
  FROM pg_options_to_table(c.reloptions)
) o
"""


def autovacuum_stand_in(database_url: str, deadline: float, out: dict[str, float]) -> None:
    """Do what autovacuum would, when the server runs without it (this machine's does).

    With autovacuum off, every row the derivation updates (a job's, an edge's aggregate;
    each event's derivation mark) leaves a dead version that no one removes, and planner
    statistics are never gathered: a soak then measures ten minutes of pile-up, not the
    system. Every NAPTIME_S this vacuums and analyzes the tables past their thresholds,
    as the autovacuum launcher would; its time is counted in the report.
    """
    with psycopg.connect(database_url, autocommit=True) as connection:
        if connection.execute("SHOW autovacuum").fetchone()[0] == "on":
            return
        while time.monotonic() + NAPTIME_S < deadline:
            time.sleep(NAPTIME_S)
            began = time.monotonic()
            for table, vacuum, analyze in connection.execute(_DUE).fetchall():
                if vacuum or analyze:
                    verb = "VACUUM (ANALYZE)" if analyze else "VACUUM"
                    connection.execute(f'{verb} "{table}"')  # names from the catalog
                    out["tables"] += 1
            out["seconds"] += time.monotonic() - began
            out["rounds"] += 1


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--ingest-rate", type=float, default=150, help="single events/s")
    parser.add_argument("--batch-every", type=float, default=2.0, help="seconds per batch")
    parser.add_argument("--read-rate", type=float, default=30, help="read requests/s")
    parser.add_argument("--sample", type=float, default=15)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_soak")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--logs", type=Path, default=Path("/tmp/lineage-soak"))
    args = parser.parse_args()

    args.logs.mkdir(parents=True, exist_ok=True)
    env = migrated_database(args.database_url)
    env.update(REDIS_URL="redis://127.0.0.1:6379/7", PORT=str(free_port()), LOG_LEVEL="WARNING")
    # The soak's own Redis database starts empty: tasks an earlier run left queued name
    # events of a database that no longer exists (35,662 of them delayed a run's first two
    # minutes on 2026-12-01).
    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    ingest_token, read_token = new_token(env, "ingest"), new_token(env, "read")
    url = f"http://127.0.0.1:{env['PORT']}"
    # Every event is distinct. The single posts are built by openlineage-python before the
    # clock starts and the system is up (bench.senders: its CPU is not the system's).
    single_count = int(args.duration * args.ingest_rate) + 500
    batched_count = int(args.duration * 100 / args.batch_every) + 500
    events = make_events(
        load_templates(args.corpus), single_count + batched_count, seed=int(time.time())
    )
    prepared = Shared(openlineage_requests(url, ingest_token, events[:single_count]))
    bodies = Shared(events[single_count:])
    web = start(web_command(), {**env, "HOST": "127.0.0.1"}, args.logs / "web.log")
    worker = start(
        [
            str(BIN / "celery"),
            "-A",
            "config",
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "WARNING",
        ],
        env,
        args.logs / "worker.log",
    )
    beat = start(
        [
            str(BIN / "celery"),
            "-A",
            "config",
            "beat",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(args.logs / "beat-schedule"),
        ],
        env,
        args.logs / "beat.log",
    )
    try:
        time.sleep(4)
        rec = Recorder()
        samples: list[dict] = []
        vacuumed = {"rounds": 0, "tables": 0, "seconds": 0.0}
        deadline = time.monotonic() + args.duration
        # Each sender waits for its answer before the next request, so a sender sends at
        # most 1 / latency per second, and a slot it misses by more than one interval is
        # skipped: enough of them that the default load is offered with 40 ms single posts
        # and 100 ms reads (two senders could not: 110 of 150 single events/s and 21 of 30
        # reads/s were sent on 2026-12-01). More senders do not send more on two saturated
        # cores: 15 and 6 sent 143.4 and 28.7/s against 142.7 and 28.4 with these, at twice
        # the latency (docs/benchmarks.md).
        singles = max(2, math.ceil(args.ingest_rate / 25))
        readers = max(1, math.ceil(args.read_rate / 10))
        threads = [
            threading.Thread(
                target=ingest_single,
                args=(url, prepared, args.ingest_rate / singles, deadline, rec),
            )
            for _ in range(singles)
        ]
        threads += [
            threading.Thread(
                target=reads,
                args=(url, read_token, args.read_rate / readers, deadline, rec, seed),
            )
            for seed in range(1, readers + 1)
        ]
        threads += [
            threading.Thread(
                target=ingest_batch,
                args=(url, ingest_token, bodies, args.batch_every, deadline, rec),
            ),
            threading.Thread(
                target=autovacuum_stand_in, args=(args.database_url, deadline, vacuumed)
            ),
            threading.Thread(
                target=sample,
                args=(
                    args.database_url,
                    env["REDIS_URL"],
                    web,
                    worker,
                    args.sample,
                    deadline,
                    samples,
                ),
            ),
        ]
        started = time.monotonic()
        cpu_before = cpu_now(web, worker, beat)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        cpu_after = cpu_now(web, worker, beat)
        # Rates are over the senders' window: the sampler and the vacuum stand-in finish
        # their round after the deadline (up to ~25 s, which the rates once counted).
        report(rec, samples, deadline - started, elapsed, args)
        report_cpu({key: cpu_after[key] - cpu_before[key] for key in cpu_after}, elapsed)
        if vacuumed["rounds"]:
            print(
                f"autovacuum is off on this server: the soak vacuumed {vacuumed['tables']} "
                f"tables in {vacuumed['rounds']} rounds of its own, one per {NAPTIME_S} s "
                f"(autovacuum's thresholds), {vacuumed['seconds']:.1f} s in all"
            )
    finally:
        for process in (beat, worker, web):
            try:
                os.killpg(process.pid, 15)
                process.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(process.pid, 9)


def report(rec: Recorder, samples: list[dict], sending: float, elapsed: float, args) -> None:
    reads = sum(len(values) for name, values in rec.latencies.items() if name.startswith("read"))
    print(
        f"soak: {sending:.0f} s of load ({elapsed:.0f} s until every thread stopped), "
        f"{rec.events} events sent ({rec.events / sending:.1f} events/s), "
        f"{reads / sending:.1f} reads/s of {args.read_rate}"
    )
    print(
        f"{'operation':38} {'count':>7} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'p99 ms':>8} {'errors':>7}"
    )
    total_errors = 0
    for operation in sorted(rec.latencies):
        values = rec.latencies[operation]
        errors = len(rec.errors[operation])
        total_errors += errors
        print(
            f"{operation:38} {len(values):7d} {len(values) / sending:7.1f} "
            f"{percentile(values, 0.5) * 1000:8.1f} {percentile(values, 0.95) * 1000:8.1f} "
            f"{percentile(values, 0.99) * 1000:8.1f} {errors:7d}"
        )
        if errors:
            print(f"    e.g. {rec.errors[operation][:3]}")
    print(f"errors: {total_errors}")
    print(
        f"{'t s':>6} {'pending':>8} {'oldest s':>9} {'lag p95 s':>10} {'web MB':>8} "
        f"{'worker MB':>10} {'queued tasks':>13}"
    )
    for row in samples:
        print(
            f"{row['t']:6.0f} {row['pending']:8d} {row['oldest_pending_s']:9.1f} "
            f"{row['lag_p95_s']:10.2f} {row['web_rss_mb']:8.0f} {row['worker_rss_mb']:10.0f} "
            f"{row['queued_tasks']:13d}"
        )
    if len(samples) >= 4:
        half = len(samples) // 2
        for key in ("web_rss_mb", "worker_rss_mb"):
            first = max(row[key] for row in samples[1:half])
            second = max(row[key] for row in samples[half:])
            print(
                f"{key}: max in first half {first:.0f}, second half {second:.0f} "
                f"({'stable' if second <= first * 1.10 else 'GREW'})"
            )


def report_cpu(used: dict[str, float], elapsed: float) -> None:
    """On one machine the load generator competes with what it measures: say how much."""
    available = elapsed * (os.cpu_count() or 1)
    machine = used.pop("machine")
    rest = machine - sum(used.values())
    parts = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in used.items())
    print(
        f"CPU: the machine was busy {machine:.0f} of {available:.0f} CPU-seconds "
        f"({100 * machine / available:.0f} %): {parts}, PostgreSQL, Redis and the rest "
        f"{rest:.0f} s"
    )


if __name__ == "__main__":
    main()

"""Derivation throughput for one worker, and derivation lag under sustained ingest.

Measures, on a scratch database (recreated), in this process:
  1. throughput: N corpus-like events (bench/common.py's Spark templates, four events per
     run) stored first, then derived by one worker loop in batches of --batch-size;
  2. lag: a producer stores single events (one transaction each, as single-event ingest
     does) at --rate events/s for --seconds while one worker derives what is pending; lag is
     derived_at - received_at of every event, reported as p50/p95/max.
Prints both figures. No broker: the worker polls exactly as the sweep does, so the lag
includes no queue time (the broker only adds its own delivery latency).

With --curve, instead: for each stream of bench/streams.py (shared datasets, a scheduled
fleet, a hot table), stores and derives chunk after chunk up to --total events, printing
each chunk's derivation rate and CPU per event. If the server runs with autovacuum off,
the tables derivation reads and writes (the event log's and the catalog's, in the bench's
own database) are vacuumed after each chunk, outside the derivation's timing, and the
vacuum's own seconds printed. --out writes the curves as JSON for bench/plot_curve.py.

The target (issue 11: the last chunk's rate >= 0.9x the first's) compares two timings,
and on a shared machine a timing hours apart measures the neighbours as much as the log.
So with several streams the curves run up to the last chunk (at once with --parallel),
and then, one stream at a time with nothing else of ours running, the last chunk is
derived on the full store and, right after it, the first chunk again on a fresh
database (the baseline): the ratio printed is of those two adjacent timings. The first
chunk of the curve itself is printed beside it.

Usage: .venv/bin/python bench/derive.py [--events 5000] [--rate 1000] [--seconds 20]
       .venv/bin/python bench/derive.py --curve [--streams shared-datasets,fleet,hot]
           [--total 1000000] [--chunk 50000] [--out curve.json]
"""

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import DEFAULT_CORPUS, load_templates, make_events, percentile

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_derive"


def _setup(database_url: str, fresh: bool = True) -> None:
    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(database_url, fresh=fresh)


def _records(count: int, seed: int) -> list:
    from ingest.validation import validate_openlineage

    templates = load_templates(DEFAULT_CORPUS)
    events = [orjson.loads(raw) for raw in make_events(templates, count, seed=seed)]
    kinds = ["START", "RUNNING", "RUNNING", "COMPLETE"]
    for index, event in enumerate(events):  # four events per run, as Spark sends them
        event["run"]["runId"] = str(uuid.UUID(int=seed * 10**9 + index // 4))
        event["eventType"] = kinds[index % 4]
        event["job"]["name"] = event["job"]["name"].rsplit(".", 1)[0] + f".{index // 4 % 97}"
    return [validate_openlineage(event) for event in events]


def _drain(batch_size: int, stop: threading.Event | None = None) -> int:
    from django.db import connection

    from catalog.services.derivation.batch import derive_pending_batch

    derived = 0
    try:
        while True:
            result = derive_pending_batch(0, batch_size)
            derived += result.derived
            if result.claimed == 0:
                if stop is None or stop.is_set():
                    return derived
                time.sleep(0.005)
    finally:
        if stop is not None:
            connection.close()


def throughput(count: int, batch_size: int) -> float:
    from ingest.services import record_events

    records = _records(count, seed=1)
    for start in range(0, len(records), 1000):
        record_events(records[start : start + 1000])
    began = time.perf_counter()
    derived = _drain(batch_size)
    elapsed = time.perf_counter() - began
    assert derived == count, (derived, count)
    return count / elapsed


def lag(rate: float, seconds: float, batch_size: int) -> tuple[float, list[float]]:
    from django.db import connection

    from ingest.services import record_events

    records = _records(int(rate * seconds), seed=2)
    stop = threading.Event()
    worker = threading.Thread(target=_drain, args=(batch_size, stop))
    worker.start()
    began = time.perf_counter()
    for index, record in enumerate(records):
        target = began + index / rate
        pause = target - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        record_events([record])
    produced = len(records) / (time.perf_counter() - began)
    stop.set()
    worker.join()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXTRACT(EPOCH FROM derived_at - received_at) FROM ingest_event "
            "WHERE derivation_status = 'derived' AND id > (SELECT max(id) FROM ingest_event) - %s",
            [len(records)],
        )
        lags = sorted(float(row[0]) for row in cursor.fetchall())
    return produced, lags


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a local process (the PostgreSQL backend deriving)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _autovacuum_is_on() -> bool:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        return cursor.fetchone()[0] == "on"


# The tables derivation reads and writes: the event log and the catalog. A VACUUM that names
# no table takes every table of the database, the shared catalogs (pg_database, pg_authid...)
# among them, and on a shared server waits on other databases' sessions: it timed them too.
MEASURED_TABLES = r"""
SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
WHERE schemaname = current_schema() AND (tablename LIKE 'ingest\_%' OR tablename LIKE 'catalog\_%')
ORDER BY tablename
"""


def vacuum_measured() -> tuple[int, float]:
    """What autovacuum would have done by now to the tables derivation measures, outside
    the derivation's timing: how many tables, and the VACUUM's seconds."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(MEASURED_TABLES)
        tables = [row[0] for row in cursor.fetchall()]
        began = time.perf_counter()
        cursor.execute(f"VACUUM (ANALYZE) {', '.join(tables)}")
    return len(tables), time.perf_counter() - began


def stored_count() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM ingest_event")
        return cursor.fetchone()[0]


# While this file exists, curves wait before their next chunk: another benchmark can then
# have the machine to itself (touch it, wait for "paused", run, remove it).
PAUSE_FILE = Path("/tmp/bench-derive-curve.pause")


def _wait_while_paused(stream: str) -> None:
    if PAUSE_FILE.exists():
        print(f"{stream}: paused", flush=True)
        while PAUSE_FILE.exists():
            time.sleep(2)


def settle(stream: str, chunk: int) -> int:
    """After a stopped run: finish its half-done chunk, untimed; the next chunk's start."""
    from bench.streams import records
    from ingest.services import record_events

    stored = stored_count()
    aligned = -(-stored // chunk) * chunk
    for offset in range(stored, aligned, 1000):  # storing is idempotent (digests)
        record_events(records(stream, offset, min(1000, aligned - offset)))
    _drain(500)
    return aligned


def curve(stream: str, total: int, chunk: int, begin: int = 0) -> list[dict[str, float]]:
    """Store and derive ``stream`` chunk after chunk from event ``begin``; one row a chunk.

    Besides the rate, each chunk's CPU per event (this process and its PostgreSQL
    backend): on a shared machine the wall-clock rate also measures the neighbours.
    """
    from django.db import connection

    from bench.streams import records
    from ingest.services import record_events

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    # A server with autovacuum off (a shared dev box may run so) would measure the pile-up
    # of dead row versions in the small, constantly updated aggregate tables (edges, jobs,
    # the hot dataset), not derivation: vacuum after each chunk, as autovacuum would.
    vacuum_between = not _autovacuum_is_on()
    if vacuum_between:
        print(
            f"{stream}: autovacuum is off on this server; vacuuming the event log's and the "
            "catalog's tables after each chunk"
        )
    rows = []
    for start in range(begin, total, chunk):
        _wait_while_paused(stream)
        size = min(chunk, total - start)
        began = time.perf_counter()
        for offset in range(start, start + size, 1000):
            record_events(records(stream, offset, min(1000, start + size - offset)))
        stored = time.perf_counter() - began
        began, cpu = time.perf_counter(), time.process_time() + _cpu_seconds(backend)
        derived = _drain(500)
        elapsed = time.perf_counter() - began
        cpu = time.process_time() + _cpu_seconds(backend) - cpu
        assert derived == size, (derived, size)
        vacuumed, vacuum = vacuum_measured() if vacuum_between else (0, 0.0)
        rows.append(
            {
                "events": start + size,
                "rate": size / elapsed,
                "cpu_ms": cpu * 1000 / size,
                "store_rate": size / stored,
                "vacuum_s": vacuum,
                "vacuum_tables": vacuumed,
            }
        )
        print(
            f"{stream}: {start + size:>9,} events stored, chunk derived at "
            f"{size / elapsed:7,.0f} events/s, {cpu * 1000 / size:.2f} ms CPU/event "
            f"(stored at {size / stored:,.0f} events/s, "
            f"vacuum of {vacuumed} tables {vacuum:.1f} s)",
            flush=True,
        )
    return rows


def _child(stream: str, total: int, options: argparse.Namespace, out: Path, *extra: str):
    import subprocess

    command = [
        sys.executable, "-m", "bench.derive", "--curve", "--streams", stream,
        "--total", str(total), "--chunk", str(options.chunk),
        "--database-url", options.database_url, "--out", str(out), "--child", *extra,
    ]  # fmt: skip
    return subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent)


def _wait(children: list) -> None:
    for child in children:
        if child.wait() != 0:
            raise SystemExit(f"a stream failed: {child.args}")


def _one_stream(options: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    """One stream in this process (Django binds one database per process)."""
    stream = options.streams
    base, _, name = options.database_url.rpartition("/")
    database = f"{base}/{name}_{stream.replace('-', '_')}{options.suffix}"
    _setup(database, fresh=not options.resume)
    begin = settle(stream, options.chunk) if options.resume else 0
    return {stream: curve(stream, options.total, options.chunk, begin)}


def run_curves(options: argparse.Namespace) -> None:
    """The curves to the last chunk (one child process per stream, one after the other or,
    with --parallel, at once); then, per stream alone, the last chunk and the baseline."""
    import tempfile

    streams = options.streams.split(",")
    folder = Path(tempfile.mkdtemp(prefix="derive-curve-"))
    last_start = (options.total - 1) // options.chunk * options.chunk
    children = []
    for stream in streams:
        resume = ["--resume"] if options.resume else []
        children.append(_child(stream, last_start, options, folder / stream, *resume))
        if not options.parallel:
            _wait(children[-1:])
    _wait(children)
    results, baselines = {}, {}
    for stream in streams:
        _wait([_child(stream, options.total, options, folder / f"{stream}.last", "--resume")])
        first_chunk = min(options.chunk, options.total)
        control = folder / f"{stream}.baseline"
        _wait([_child(stream, first_chunk, options, control, "--suffix", "_baseline")])
        rows = orjson.loads((folder / stream).read_bytes())[stream]
        results[stream] = rows + orjson.loads((folder / f"{stream}.last").read_bytes())[stream]
        baselines[stream] = orjson.loads(control.read_bytes())[stream][0]
    for stream, rows in results.items():
        first, last, baseline = rows[0], rows[-1], baselines[stream]
        print(
            f"{stream}: last chunk {last['rate']:,.0f} events/s at {last['events']:,.0f} events "
            f"({last['cpu_ms']:.2f} ms CPU/event); baseline right after it, the first chunk "
            f"on a fresh store, {baseline['rate']:,.0f} events/s ({baseline['cpu_ms']:.2f} ms): "
            f"last/baseline = {last['rate'] / baseline['rate']:.2f} (target >= 0.90); "
            f"the first chunk this run timed ran at {first['rate']:,.0f} events/s "
            f"({first['cpu_ms']:.2f} ms), last/first = {last['rate'] / first['rate']:.2f}",
            flush=True,
        )
    if options.out:
        document = {"curves": results, "baselines": baselines}
        Path(options.out).write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    parser.add_argument("--curve", action="store_true", help="rate per chunk as the log grows")
    parser.add_argument("--streams", default="shared-datasets,fleet,hot")
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--chunk", type=int, default=50_000)
    parser.add_argument("--parallel", action="store_true", help="derive the streams at once")
    parser.add_argument("--out", help="write the curves as JSON here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--resume", action="store_true", help="continue the curves a stopped run left"
    )
    parser.add_argument("--suffix", default="", help=argparse.SUPPRESS)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--rate", type=float, default=1000.0, help="single-event ingest rate")
    parser.add_argument("--seconds", type=float, default=20.0)
    options = parser.parse_args()
    if options.child:  # one stream of run_curves
        Path(options.out).write_bytes(orjson.dumps(_one_stream(options)))
        return
    if options.curve:
        run_curves(options)
        return
    _setup(options.database_url)
    rate = throughput(options.events, options.batch_size)
    print(f"derivation throughput, one worker: {rate:,.0f} events/s ({options.events} events)")
    produced, lags = lag(options.rate, options.seconds, options.batch_size)
    print(
        f"lag under sustained single-event ingest at {produced:,.0f} events/s "
        f"(asked {options.rate:,.0f}) for {options.seconds:.0f} s: "
        f"p50 {percentile(lags, 0.5) * 1000:.0f} ms, p95 {percentile(lags, 0.95) * 1000:.0f} ms, "
        f"max {lags[-1] * 1000:.0f} ms over {len(lags)} events"
    )


if __name__ == "__main__":
    main()

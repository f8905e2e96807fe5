"""Where the Kafka consumers' time goes: CPU seconds per process, lock waits, rebalances and
the batches actually reached, for one and for two consumers of one group.

For each measurement (a fresh topic of 4 partitions on librdkafka's mock cluster,
``--events`` Spark events produced once every consumer holds its partitions), prints:
  - stored events/s from the first stored event to the last (as bench/kafka.py measures);
  - CPU seconds inside that window of the consumers, of the PostgreSQL backends connected
    to the bench database, of the mock cluster and of this process (the producer), and
    what one stored event costs in total, so what two cores can give at most;
  - samples of pg_stat_activity in which a backend of the bench database waited on a lock;
  - rebalances (assigned/revoked lines of the consumers) inside the window;
  - the batches the consumers wrote (their DEBUG ``kafka_batch`` lines): how many messages,
    how long the batch waited to fill, to be prepared, written and committed.

Usage: .venv/bin/python -m bench.kafka_accounting [--events 6000] [--consumers 1 2]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

from bench.common import DEFAULT_CORPUS, ROOT, load_templates, make_events, migrated_database
from bench.kafka import members, mock_cluster, produce
from ingest.kafka.mock import create_topics

_TICKS = os.sysconf("SC_CLK_TCK")
_BATCH = re.compile(
    r"kafka_batch messages=(\d+) fill_ms=([\d.]+) prepare_ms=([\d.]+) write_ms=([\d.]+) "
    r"wait_ms=([\d.]+) commit_ms=([\d.]+)"
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its threads so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


def backend_pids(connection: psycopg.Connection) -> list[int]:
    rows = connection.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()"
    ).fetchall()
    return [int(row[0]) for row in rows]


class Sampler(threading.Thread):
    """Every 20 ms, on one connection: events stored, backends waiting on a lock."""

    def __init__(self, database_url: str) -> None:
        super().__init__(daemon=True)
        self.connection = psycopg.connect(database_url, autocommit=True)
        self.samples: list[tuple[float, int, int, int]] = []  # time, stored, lock, busy
        self.backends: set[int] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            stored = self.connection.execute("SELECT count(*) FROM ingest_event").fetchone()
            waits = self.connection.execute(
                "SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'), "
                "count(*) FILTER (WHERE state = 'active') FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
            self.backends.update(backend_pids(self.connection))
            assert stored is not None and waits is not None
            self.samples.append((time.perf_counter(), int(stored[0]), int(waits[0]), int(waits[1])))
            time.sleep(0.02)


def measure(
    env: dict[str, str],
    database_url: str,
    bootstrap: str,
    mock_pid: int,
    topic: str,
    events: list[bytes],
    consumers: int,
    logs: Path,
) -> None:
    create_topics(bootstrap, [topic])
    env = {
        **env,
        "LINEAGE_KAFKA_TOPICS": topic,
        "LINEAGE_KAFKA_GROUP_ID": f"accounting-{topic}",
        "LINEAGE_CONSUMER_PORT": "0",
        "LINEAGE_CONSUMER_LAG_REPORT_SECONDS": "1",
        "LOG_LEVEL": "DEBUG",
    }
    command = [sys.executable, "manage.py", "consume_kafka"]
    paths = [logs / f"{topic}-{number}.log" for number in range(consumers)]
    outputs = [path.open("w") for path in paths]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        for out in outputs
    ]
    sampler = Sampler(database_url)
    try:
        with psycopg.connect(database_url) as connection:
            before = int(connection.execute("SELECT count(*) FROM ingest_event").fetchone()[0])  # type: ignore[index]
            while members(database_url, topic) < consumers:
                time.sleep(0.2)
            time.sleep(1.0)  # past the rebalance that shared the partitions
            backends = backend_pids(connection)
        pids = {"consumers": [p.pid for p in processes], "mock": [mock_pid], "bench": [os.getpid()]}
        start_wall = time.perf_counter()
        start_cpu = {name: [cpu_seconds(pid) for pid in group] for name, group in pids.items()}
        start_backend = {pid: cpu_seconds(pid) for pid in backends}
        sampler.start()
        produced_at = time.perf_counter()
        produce(bootstrap, topic, events)
        produced = time.perf_counter() - produced_at
        target = before + len(events)
        while not sampler.samples or sampler.samples[-1][1] < target:
            time.sleep(0.02)
        end_cpu = {name: [cpu_seconds(pid) for pid in group] for name, group in pids.items()}
        end_backend = {pid: cpu_seconds(pid) for pid in sampler.backends | set(backends)}
        end_wall = time.perf_counter()
        sampler.done.set()
        sampler.join()
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
        for out in outputs:
            out.close()
    window = [s for s in sampler.samples if before < s[1]]
    first, last = window[0], window[-1]
    rate = (last[1] - first[1]) / (last[0] - first[0])
    cpu = {
        name: sum(end - start for start, end in zip(start_cpu[name], end_cpu[name], strict=True))
        for name in pids
    }
    cpu["postgres"] = sum(end - start_backend.get(pid, 0.0) for pid, end in end_backend.items())
    total_cpu = sum(cpu.values())
    wall = end_wall - start_wall
    print(f"\n== {consumers} consumer(s), {len(events)} events ==")
    print(
        f"stored {rate:7.0f} events/s in the window ({last[0] - first[0]:.2f} s); "
        f"producing took {produced:.2f} s"
    )
    print(
        f"CPU seconds over the whole {wall:.2f} s: "
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in cpu.items())
        + f"; total {total_cpu:.2f} = {total_cpu / wall:.2f} cores busy"
    )
    per_event = total_cpu / len(events) * 1e6
    print(
        f"CPU per stored event: {per_event:.0f} us in total (consumers "
        f"{cpu['consumers'] / len(events) * 1e6:.0f} us, postgres "
        f"{cpu['postgres'] / len(events) * 1e6:.0f} us) -> 2 cores can give at most "
        f"{2e6 / per_event:.0f} events/s"
    )
    locks = sum(1 for s in window if s[2])
    busy = statistics.mean(s[3] for s in window) if window else 0
    print(
        f"pg_stat_activity: {len(window)} samples, {locks} with a backend waiting on a lock, "
        f"{busy:.2f} active backends on average"
    )
    for number, path in enumerate(paths):
        text = path.read_text()
        batches = [tuple(float(x) for x in m.groups()) for m in _BATCH.finditer(text)]
        rebalances = text.count("kafka_assigned") + text.count("kafka_revoked")
        if not batches:
            print(f"consumer {number}: no batch lines")
            continue
        sizes = [b[0] for b in batches]
        print(
            f"consumer {number}: {len(batches)} batches, messages median "
            f"{statistics.median(sizes):.0f} (min {min(sizes):.0f}, max {max(sizes):.0f}); "
            "median ms: "
            + ", ".join(
                f"{name} {statistics.median(b[i] for b in batches):.1f}"
                for i, name in enumerate(("fill", "prepare", "write", "wait", "commit"), 1)
            )
            + f"; assigned/revoked lines in its life: {rebalances}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=6000)
    parser.add_argument("--consumers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_kafka_acct"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--keep-logs", action="store_true")
    args = parser.parse_args()
    templates = load_templates(args.corpus)
    env = migrated_database(args.database_url)
    logs = Path(tempfile.mkdtemp(prefix="kafka-accounting-"))
    with mock_cluster() as (mock, bootstrap):
        env = {**env, "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap}
        for index, consumers in enumerate(args.consumers):
            events = make_events(templates, args.events, seed=300 + index)
            measure(
                env,
                args.database_url,
                bootstrap,
                mock.pid,
                f"acct-{index}",
                events,
                consumers,
                logs,
            )
    print(f"\nconsumer logs: {logs}" if args.keep_logs else "")


if __name__ == "__main__":
    main()

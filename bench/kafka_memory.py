"""Peak memory of ``manage.py consume_kafka`` reading hostile messages (issue 38 item 2).

Starts librdkafka's mock cluster (``python -m ingest.kafka.mock``), produces each case into
a topic of its own (each message in a batch of its own, spread over the 4 partitions, then
one valid event), and runs one consumer (default settings, a new group) until it is idle and
caught up. Prints the consumer's peak RSS (its VmHWM as it exits), its time, the dead
letters it wrote and whether the valid event after them was stored.

Usage: .venv/bin/python -m bench.kafka_memory [--database postgres://.../name] [--only NAME]
The database is made anew and migrated. The chart gives the consumer 512 MiB.
"""

import argparse
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson
import psycopg
from confluent_kafka import Producer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BIN, PEAK_PROBE, ROOT, migrated_database, peak_mib
from ingest.kafka.mock import create_topics

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_kafka_memory"
MIB = 1 << 20


@dataclass(frozen=True)
class Case:
    count: int
    size: int  # bytes of each value, inflated
    codec: str


CASES = {
    "one-event": Case(0, 0, "none"),  # the baseline: only the valid event
    # The review's two cases.
    "zstd-80x17MB": Case(80, 17 * 1000 * 1000, "zstd"),
    "gzip-1x300MB": Case(1, 300 * 1000 * 1000, "gzip"),
    # About the most a zstd batch inflates to under the default receive.message.max.bytes
    # (4 MiB): librdkafka grows its buffer threefold at a time up to that limit, so how
    # close to it a batch may come depends on its size on the wire (3.06 MiB for these).
    "zstd-80x3MB": Case(80, 3 * 1000 * 1000, "zstd"),
}


def valid_event(topic: str) -> bytes:
    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-12-03T00:00:00Z",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "bench-kafka-memory", "name": topic},
            "producer": "https://example.com/bench",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    )


def produce(bootstrap: str, topic: str, case: Case) -> None:
    """Each message flushed alone, so that each is a batch of its own and this process
    holds one at a time; without a key, so that they spread over the topic's 4 partitions
    (the mock cluster returns one batch per partition per fetch), then the valid event."""
    settings = {"bootstrap.servers": bootstrap, "message.max.bytes": 10**9}
    if case.codec != "none":
        settings["compression.type"] = case.codec
    producer = Producer(settings)
    if case.count:
        value = b'{"x": "' + b"1" * (case.size - 10) + b'"}'
        for _ in range(case.count):
            producer.produce(topic, value=value)
            assert producer.flush(120) == 0
        del value
    producer.produce(topic, value=valid_event(topic))
    assert producer.flush(30) == 0


def consume(env: dict[str, str], bootstrap: str, topic: str) -> tuple[float, float]:
    started = time.monotonic()
    result = subprocess.run(
        [
            BIN / "python",
            "-c",
            PEAK_PROBE,
            ROOT / "manage.py",
            "consume_kafka",
            "--exit-when-idle",
            "2",
        ],
        cwd=ROOT,
        env={
            **env,
            "PYTHONPATH": str(ROOT),
            "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
            "LINEAGE_KAFKA_TOPICS": topic,
            "LINEAGE_KAFKA_GROUP_ID": f"bench-{uuid.uuid4().hex[:8]}",
            "LINEAGE_CONSUMER_PORT": "0",
            "LOG_LEVEL": "ERROR",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    elapsed = time.monotonic() - started
    if "peak-kib" not in result.stderr or result.returncode != 0:
        raise SystemExit(f"the consumer failed ({result.returncode}): {result.stderr[-3000:]}")
    return peak_mib(result.stderr), elapsed


def outcome(database_url: str, topic: str) -> str:
    with psycopg.connect(database_url) as connection:
        letters = connection.execute(
            "SELECT reason_code, count(*) FROM ingest_dead_letter WHERE topic = %s "
            "GROUP BY 1 ORDER BY 1",
            [topic],
        ).fetchall()
        row = connection.execute(
            "SELECT count(*) FROM ingest_event WHERE job_name = %s", [topic]
        ).fetchone()
    stored = int(row[0]) if row else 0
    dead = ", ".join(f"{count} {code}" for code, count in letters) or "none"
    return f"dead letters: {dead}; the valid event stored: {stored}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--only", choices=sorted(CASES))
    arguments = parser.parse_args()
    env = migrated_database(arguments.database)
    cluster = subprocess.Popen(
        [str(BIN / "python"), "-m", "ingest.kafka.mock"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert cluster.stdout is not None
        bootstrap = cluster.stdout.readline().strip().split("=", 1)[1]
        print(f"{'case':16} {'peak RSS':>10} {'time':>7}  result")
        for name, case in CASES.items():
            if arguments.only and name not in (arguments.only, "one-event"):
                continue
            topic = f"memory-{name}-{uuid.uuid4().hex[:6]}"
            create_topics(bootstrap, [topic])
            produce(bootstrap, topic, case)
            peak, elapsed = consume(env, bootstrap, topic)
            result = outcome(env["DATABASE_URL"], topic)
            print(f"{name:16} {peak:>6.0f} MiB {elapsed:>6.1f}s  {result}")
    finally:
        cluster.terminate()
        cluster.wait(timeout=10)


if __name__ == "__main__":
    main()

"""Does derivation keep up with Kafka ingest? A paced producer writes --rate events/s for
--seconds into the mock cluster; one ``manage.py consume_kafka`` stores them and one Celery
worker (--concurrency processes) derives them, as deployed. Every 5 s it prints what was
produced, stored and derived, and the age of the oldest event still waiting for derivation
(what ``lineage_derivation_lag_seconds`` reports); at the end the largest lag seen and the
Kafka lag left.

Usage: .venv/bin/python -m bench.kafka_soak [--rate 200] [--seconds 300] [--concurrency 1]
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from confluent_kafka import Producer

from bench.common import DEFAULT_CORPUS, ROOT, load_templates, make_events, migrated_database
from ingest.kafka.mock import create_topics
from scripts.run_local import celery_command

TOPIC = "soak"


def figures(database_url: str) -> tuple[int, int, float]:
    """(stored, derived, age in seconds of the oldest pending event, 0 when none)."""
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(*), count(*) FILTER (WHERE derivation_status = 'derived'), "
            "coalesce(extract(epoch FROM now() - min(received_at) FILTER "
            "(WHERE derivation_status = 'pending')), 0) FROM ingest_event"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), float(row[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_soak"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()

    templates = load_templates(args.corpus)
    total = args.rate * args.seconds
    env = migrated_database(args.database_url)
    mock = subprocess.Popen(
        [sys.executable, "-m", "ingest.kafka.mock"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert mock.stdout is not None
    bootstrap = mock.stdout.readline().strip().split("=", 1)[1]
    create_topics(bootstrap, [TOPIC])
    env = {
        **env,
        "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "LINEAGE_KAFKA_TOPICS": TOPIC,
        "LINEAGE_CONSUMER_PORT": "0",
    }
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    services = [
        subprocess.Popen(
            [sys.executable, "manage.py", "consume_kafka"], cwd=ROOT, env=env, **quiet
        ),
        subprocess.Popen(
            celery_command("worker", "--concurrency", str(args.concurrency), "--without-gossip"),
            cwd=ROOT,
            env=env,
            **quiet,
        ),
    ]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    worst = 0.0
    print(f"{args.rate} events/s for {args.seconds} s, worker concurrency {args.concurrency}")
    try:
        time.sleep(5)  # the consumer joins its group, the worker starts
        started = time.monotonic()
        sent = 0
        next_report = started + 5
        chunk: list[bytes] = []
        while sent < total:
            due = min(total, int((time.monotonic() - started) * args.rate))
            while sent < due:
                if not chunk:  # a second's events at a time: the run's never all in memory
                    chunk = make_events(templates, args.rate, seed=1000 + sent // args.rate)
                producer.produce(TOPIC, value=chunk.pop())
                sent += 1
            producer.poll(0)
            if time.monotonic() >= next_report:
                stored, derived, lag = figures(args.database_url)
                worst = max(worst, lag)
                elapsed = time.monotonic() - started
                print(
                    f"{elapsed:5.0f} s: produced {sent:7d}, stored {stored:7d}, derived "
                    f"{derived:7d}, derivation lag {lag:5.1f} s",
                    flush=True,
                )
                next_report += 5
            time.sleep(0.05)
        producer.flush(60)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            stored, derived, lag = figures(args.database_url)
            worst = max(worst, lag)
            if derived >= total:
                break
            time.sleep(1)
        after = time.monotonic() - started - args.seconds
        print(
            f"after the run: stored {stored} of {total}, derived {derived}; largest "
            f"derivation lag {worst:.1f} s; derived {after:.0f} s after the producer stopped"
        )
    finally:
        for service in services:
            service.terminate()
        for service in services:
            service.wait(timeout=60)
        mock.terminate()
        mock.wait(timeout=30)


if __name__ == "__main__":
    main()

"""One Kafka consumer's ingest rate with and without a flood of its probe port (ADR 0177).

On one scratch database (made anew): one ``manage.py consume_kafka`` with its probe port
reads --events messages from a topic of 4 partitions of librdkafka's mock cluster, once
quiet and once while --clients clients ask its ``/readyz`` as fast as they are answered
(from this process, on the same cores). Prints events stored per second (first stored
event to last, read from ingest_event), the flood's answers, and the most PostgreSQL
backends seen on the database meanwhile (this script's own sampling one not counted).

Usage: .venv/bin/python -m bench.kafka_probe_flood [--events 20000] [--clients 40] [--rounds 2]
"""

import argparse
import http.client
import multiprocessing
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import psycopg

from bench.common import (
    DEFAULT_CORPUS,
    ROOT,
    free_port,
    load_templates,
    make_events,
    migrated_database,
)
from bench.kafka import mock_cluster, produce, stored, storing_rate, wait_for_members
from ingest.kafka.mock import create_topics


def backends(connection: psycopg.Connection) -> int:
    row = connection.execute(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    ).fetchone()
    return int(row[0]) if row else 0


def flood(port: int, stop: threading.Event, answers: dict[str, int]) -> None:
    while not stop.is_set():
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            client.request("GET", "/readyz")
            answer = client.getresponse()
            answer.read()
            key = str(answer.status)
        except OSError:
            key = "no answer"
        finally:
            client.close()
        answers[key] = answers.get(key, 0) + 1


def flooding(port: int, clients: int, stop: Any, results: Any) -> None:
    """The flood, in a process of its own: its threads do not take the GIL from this
    script's producer and sampling."""
    answers: dict[str, int] = {}
    done = threading.Event()
    threads = [threading.Thread(target=flood, args=(port, done, answers)) for _ in range(clients)]
    for thread in threads:
        thread.start()
    stop.wait()
    done.set()
    for thread in threads:
        thread.join()
    results.put(answers)


def measure(
    env: dict[str, str],
    database_url: str,
    bootstrap: str,
    topic: str,
    events: list[bytes],
    clients: int,
) -> tuple[float, int, dict[str, int]]:
    """Events/s, the most backends seen, and the flood's answers by status."""
    before = stored(database_url)
    target = before + len(events)
    create_topics(bootstrap, [topic])
    port = free_port()
    env = {
        **env,
        "LINEAGE_KAFKA_TOPICS": topic,
        "LINEAGE_KAFKA_GROUP_ID": f"bench-{topic}",
        "LINEAGE_CONSUMER_PORT": str(port),
        "LINEAGE_CONSUMER_LAG_REPORT_SECONDS": "1",
    }
    command = [sys.executable, "manage.py", "consume_kafka"]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    stop, results = multiprocessing.Event(), multiprocessing.Queue()
    flooder = multiprocessing.Process(target=flooding, args=(port, clients, stop, results))
    answers: dict[str, int] = {}
    most = 0
    try:
        wait_for_members(database_url, topic, 1, "the consumer")
        if clients:
            flooder.start()
        produce(bootstrap, topic, events)
        with psycopg.connect(database_url, autocommit=True) as sampler:

            def sample_backends() -> None:
                nonlocal most
                most = max(most, backends(sampler))

            rate = storing_rate(database_url, before, target, "the consumer", sample_backends)
    finally:
        stop.set()
        if clients:
            answers = results.get(timeout=60)
            flooder.join()
        process.terminate()
        process.wait(timeout=60)
    return rate, most, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_probes"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    templates = load_templates(args.corpus)
    env = migrated_database(args.database_url)
    print(f"{args.events} events per measurement, 4 partitions, flood of {args.clients} clients")
    with mock_cluster() as (_, bootstrap):
        env = {**env, "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap}
        for round_number in range(args.rounds):
            for clients in (0, args.clients):
                topic = f"probes-{round_number}-{clients}"
                events = make_events(
                    templates, args.events, seed=200 + 2 * round_number + bool(clients)
                )
                rate, most, answers = measure(
                    env, args.database_url, bootstrap, topic, events, clients
                )
                print(
                    f"round {round_number + 1}, {clients:>3} flooding clients: {rate:,.0f} "
                    f"events/s, at most {most} backends, /readyz answers {answers}",
                    flush=True,
                )


if __name__ == "__main__":
    main()

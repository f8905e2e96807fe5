"""Kafka ingest throughput against the batch HTTP endpoint, in one run on one machine.

Measures, on one scratch database (made anew):
  1. POST /api/v1/lineage/batch (batches of --batch-size) from --clients clients, against
     the shipped web server (``python -m config.server``, production settings);
  2. one ``manage.py consume_kafka`` reading --events messages from a topic of 4 partitions
     of librdkafka's mock cluster (``python -m ingest.kafka.mock``), the same kind of events;
  3. two consumers of one group reading another such topic.
The messages are produced once every consumer holds its partitions; each consumer figure is
events stored per second from the first stored event to the last, read from ingest_event
(with the producer running meanwhile, on the same cores). Prints the
figures and the ratios the issue sets targets for (Kafka >= 0.8 x batch HTTP, two consumers
>= 1.6 x one). The mock cluster runs on the same cores as everything else.

With --consumer-cpu CORES each consumer is held to that many cores (a CFS quota, what a
pod's CPU limit is): on a machine whose cores one unconstrained consumer already fills,
that is how to see whether a second consumer adds what it is given.

Usage: .venv/bin/python -m bench.kafka [--events 20000] [--rounds 3] [--consumer-cpu 0.5]
"""

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
from confluent_kafka import Producer

from bench.common import (
    DEFAULT_CORPUS,
    ROOT,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    running_server,
)
from bench.cpu_quota import available as quota_unavailable
from bench.cpu_quota import cpu_quota
from bench.ingest import post_all
from ingest.kafka.mock import create_topics


def stored(database_url: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute("SELECT count(*) FROM ingest_event").fetchone()
    return int(row[0]) if row else 0


def produce(bootstrap: str, topic: str, events: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for index, event in enumerate(events):
        while True:
            try:
                producer.produce(topic, value=event, key=str(index).encode())
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    if producer.flush(120):
        raise SystemExit("the producer could not deliver every message")


def members(database_url: str, topic: str) -> int:
    """Consumers that reported partitions of ``topic`` (each reports on being assigned)."""
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(DISTINCT member), count(*) FROM ingest_consumer_lag WHERE topic = %s",
            [topic],
        ).fetchone()
    return int(row[0]) if row and row[1] == 4 else 0


def wait_for_members(database_url: str, topic: str, consumers: int, who: str) -> None:
    """Until ``consumers`` consumers hold the partitions of ``topic``; at most 2 minutes."""
    deadline = time.monotonic() + 120
    while members(database_url, topic) < consumers:
        if time.monotonic() > deadline:
            raise SystemExit(f"{who} did not take the partitions in 2 minutes")
        time.sleep(0.2)


def storing_rate(
    database_url: str,
    before: int,
    target: int,
    who: str,
    each_poll: Callable[[], None] = lambda: None,
) -> float:
    """Events/s stored from the first event past ``before`` until ``target`` are stored,
    the count polled every 20 ms (``each_poll`` called before each) for at most 10 minutes."""
    first = last = None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        each_poll()
        now_stored = stored(database_url)
        moment = time.perf_counter()
        if first is None and now_stored > before:
            first = (moment, now_stored)
        if now_stored >= target:
            last = (moment, now_stored)
            break
        time.sleep(0.02)
    if first is None or last is None:
        raise SystemExit(f"{who} did not store every message in 10 minutes")
    return (last[1] - first[1]) / (last[0] - first[0])


@contextlib.contextmanager
def mock_cluster() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """librdkafka's mock cluster (``python -m ingest.kafka.mock``) and its bootstrap
    address, stopped after."""
    mock = subprocess.Popen(
        [sys.executable, "-m", "ingest.kafka.mock"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert mock.stdout is not None
        yield mock, mock.stdout.readline().strip().split("=", 1)[1]
    finally:
        mock.terminate()
        mock.wait(timeout=30)


def consumer_rate(
    env: dict[str, str],
    database_url: str,
    bootstrap: str,
    topic: str,
    events: list[bytes],
    consumers: int,
    cpu: float | None = None,
) -> float:
    """Events/s stored by ``consumers`` processes of one group reading ``events``, produced
    once every consumer holds its partitions (a rebalance is not what is measured here);
    with ``cpu``, each consumer held to that many cores (``bench.cpu_quota``)."""
    before = stored(database_url)
    target = before + len(events)
    create_topics(bootstrap, [topic])
    env = {
        **env,
        "LINEAGE_KAFKA_TOPICS": topic,
        "LINEAGE_KAFKA_GROUP_ID": f"bench-{topic}",
        "LINEAGE_CONSUMER_PORT": "0",
        "LINEAGE_CONSUMER_LAG_REPORT_SECONDS": "1",
    }
    command = [sys.executable, "manage.py", "consume_kafka"]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        for _ in range(consumers)
    ]
    quotas = contextlib.ExitStack()
    if cpu is not None:
        for process in processes:
            quotas.enter_context(cpu_quota(process.pid, cpu, "consumer"))
    try:
        wait_for_members(database_url, topic, consumers, "the consumers")
        produce(bootstrap, topic, events)
        return storing_rate(database_url, before, target, "the consumers")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
        quotas.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_bench_kafka"
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument(
        "--consumer-cpu",
        type=float,
        default=None,
        metavar="CORES",
        help="hold each consumer to this many cores (a CFS quota, as a pod's CPU limit; "
        "root): two consumers then scale only if the second finds CPU the first cannot use",
    )
    args = parser.parse_args()
    if args.consumer_cpu is not None and (why := quota_unavailable()):
        raise SystemExit(f"--consumer-cpu: {why}")

    templates = load_templates(args.corpus)
    env = migrated_database(args.database_url)
    token = new_token(env, "ingest")
    print(
        f"{args.events} events per measurement (Spark events of 2-5 KB), batches of "
        f"{args.batch_size}, {args.clients} HTTP clients, 4 partitions, {args.rounds} round(s)"
        + (f", each consumer held to {args.consumer_cpu} cores" if args.consumer_cpu else "")
    )
    http_rates, one_rates, two_rates = [], [], []
    with mock_cluster() as (_, bootstrap):
        env = {**env, "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap}
        with running_server(env) as url:
            for round_number in range(args.rounds):
                seed = 100 + round_number * 3
                events = make_events(templates, args.events, seed=seed)
                bodies = [
                    b"[" + b",".join(events[start : start + args.batch_size]) + b"]"
                    for start in range(0, len(events), args.batch_size)
                ]
                seconds, _ = post_all(url, token, "/api/v1/lineage/batch", bodies, args.clients)
                http_rates.append(len(events) / seconds)
                for consumers, rates in ((1, one_rates), (2, two_rates)):
                    topic = f"bench-{round_number}-{consumers}"
                    messages = make_events(templates, args.events, seed + consumers)
                    rates.append(
                        consumer_rate(
                            env,
                            args.database_url,
                            bootstrap,
                            topic,
                            messages,
                            consumers,
                            args.consumer_cpu,
                        )
                    )
                print(
                    f"round {round_number + 1}: batch HTTP {http_rates[-1]:7.0f} events/s, "
                    f"1 consumer {one_rates[-1]:7.0f}, 2 consumers {two_rates[-1]:7.0f}",
                    flush=True,
                )
    http, one, two = (statistics.median(r) for r in (http_rates, one_rates, two_rates))
    # Ratios per round, then their median: the machine's speed drifts between rounds.
    versus_http = sorted(o / h for o, h in zip(one_rates, http_rates, strict=True))
    scaling = sorted(t / o for t, o in zip(two_rates, one_rates, strict=True))
    print(f"batch POST          : {http:8.0f} events/s (median of the rounds)")
    print(f"Kafka, 1 consumer   : {one:8.0f} events/s")
    print(f"Kafka, 2 consumers  : {two:8.0f} events/s")
    print(
        f"ratio 1 consumer / batch HTTP : {statistics.median(versus_http):.2f} median of "
        f"{len(versus_http)} rounds ({versus_http[0]:.2f}-{versus_http[-1]:.2f}) (target >= 0.8)"
    )
    print(
        f"ratio 2 consumers / 1         : {statistics.median(scaling):.2f} median of "
        f"{len(scaling)} rounds ({scaling[0]:.2f}-{scaling[-1]:.2f}) (target >= 1.6)"
    )


if __name__ == "__main__":
    main()

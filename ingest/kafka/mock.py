"""librdkafka's mock cluster, for the tests and ``make run`` only: nothing to install.

``python -m ingest.kafka.mock [--brokers N] [--topic NAME ...]`` starts a cluster that
speaks the Kafka protocol on 127.0.0.1, prints ``bootstrap=HOST:PORT`` on one line and runs
until it is terminated. It keeps everything in memory: stopping it forgets every topic and
offset. Topics are created on first use with 4 partitions (librdkafka's default for the
mock); those named with ``--topic`` are created at start.
"""

import argparse
import logging
import re
import signal
import threading

from confluent_kafka import Consumer, Producer

_ADDRESS = re.compile(r"replaced with (\S+)")


class _AddressLog(logging.Handler):
    """librdkafka says which address the mock cluster listens on in a log line."""

    def __init__(self) -> None:
        super().__init__()
        self.address = ""
        self.found = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        found = _ADDRESS.search(record.getMessage())
        if found and not self.found.is_set():
            self.address = found.group(1).rstrip(",")
            self.found.set()


def create_topics(address: str, topics: list[str]) -> None:
    """Create ``topics`` on the mock cluster at ``address`` (4 partitions each): a metadata
    request that may create them, since the mock implements no CreateTopics."""
    for topic in topics:
        creator = Consumer(
            {
                "bootstrap.servers": address,
                "group.id": "ingest-kafka-mock",
                "allow.auto.create.topics": True,
            }
        )
        creator.list_topics(topic, timeout=10)
        creator.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brokers", type=int, default=1)
    parser.add_argument("--topic", action="append", default=[])
    options = parser.parse_args()
    handler = _AddressLog()
    log = logging.getLogger("ingest.kafka.mock")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    # The handle that owns the cluster: it lives as long as this process.
    owner = Producer(
        {
            "bootstrap.servers": "127.0.0.1:1",  # replaced by the mock cluster's address
            "test.mock.num.brokers": options.brokers,
            "logger": log,
        }
    )
    owner.poll(0.1)
    if not handler.found.wait(10):
        raise SystemExit("the mock cluster did not report its address")
    create_topics(handler.address, options.topic)
    print(f"bootstrap={handler.address}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    while not stopped.wait(0.5):
        owner.poll(0)


if __name__ == "__main__":
    main()

"""A Kafka-protocol broker on this machine for the tests: librdkafka's mock cluster in a
subprocess (``python -m tests.ingest.kafka.prompt_mock``: ``ingest.kafka.mock``'s cluster
without its 3 s wait before a new consumer group forms), and the real producers that write
to it."""

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, Producer, TopicPartition

ROOT = Path(__file__).resolve().parents[3]


@contextmanager
def mock_cluster(*topics: str) -> Iterator[str]:
    """Start the mock cluster with ``topics`` (4 partitions each); yields its bootstrap address."""
    command = [sys.executable, "-m", "tests.ingest.kafka.prompt_mock"]
    for topic in topics:
        command += ["--topic", topic]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("bootstrap="):
            raise RuntimeError(f"the mock cluster did not start: {line!r}")
        yield line.strip().split("=", 1)[1]
    finally:
        process.terminate()
        process.wait(timeout=10)


def produce(
    bootstrap: str, topic: str, values: list[Any], key: bytes | None = None, **client: Any
) -> None:
    """A plain confluent-kafka producer, as a metadata service would use; ``values`` that
    are not bytes are sent as JSON; ``client``: more librdkafka settings."""
    producer = Producer({"bootstrap.servers": bootstrap, **client})
    for index, value in enumerate(values):
        body = value if isinstance(value, bytes) else orjson.dumps(value)
        producer.produce(topic, value=body, key=key if key is not None else str(index).encode())
        producer.poll(0)
    assert producer.flush(30) == 0


def committed_total(bootstrap: str, group: str, topic: str, partitions: int = 4) -> int:
    """The sum of the group's committed offsets on ``topic``: messages it acknowledged."""
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        found = reader.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return sum(max(0, part.offset) for part in found)
    finally:
        reader.close()

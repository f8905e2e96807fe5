"""How the consumer cuts batches, against librdkafka's mock cluster: a batch does not wait
for messages that are not there while the writer is free, and waits for more, up to its
time bound, while the writer is busy (ADR 0065)."""

import time
import uuid

import pytest

from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.mock import create_topics
from ingest.kafka.storage import PreparedBatch
from tests.ingest.kafka.cluster import produce

pytestmark = pytest.mark.django_db(transaction=True)


def event(number: int) -> dict[str, object]:
    return {
        "eventType": "START",
        "eventTime": "2026-12-02T10:00:00Z",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "kafka-batching", "name": f"job-{number}"},
        "producer": "https://example.com/kafka-batching",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def joined(bootstrap: str) -> IngestConsumer:
    """A consumer of a new topic (batches of 500 or 200 ms) that has joined its group and
    read the topic's first ten messages (then dropped them)."""
    topic = f"batching-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic])
    config = kafka_config.load(
        {
            "BOOTSTRAP_SERVERS": bootstrap,
            "TOPICS": [topic],
            "GROUP_ID": f"tests-{uuid.uuid4().hex[:8]}",
            "PORT": 0,
            "BATCH_MESSAGES": 500,
            "BATCH_MS": 200,
        }
    )
    consumer = IngestConsumer(config)
    consumer.subscribe()
    produce(bootstrap, topic, [event(number) for number in range(10)])
    deadline = time.monotonic() + 60
    while len(consumer.pending) < 10 and time.monotonic() < deadline:
        consumer._gather()  # joins the group, is assigned the partitions, reads
    assert len(consumer.pending) == 10
    consumer.pending = []
    return consumer


def gather_ten_more(bootstrap: str, consumer: IngestConsumer) -> float:
    """Seconds ``_gather`` takes over ten more messages, fetched by librdkafka in the
    background beforehand."""
    produce(bootstrap, next(iter(consumer.config.topics)), [event(n) for n in range(10, 20)])
    time.sleep(1.5)
    started = time.monotonic()
    consumer._gather()
    took = time.monotonic() - started
    assert len(consumer.pending) == 10
    return took


def close(consumer: IngestConsumer) -> None:
    consumer._in_flight = None
    consumer.consumer.close()
    consumer._writer.shutdown(wait=True)


def test_fewer_messages_than_a_batch_are_handed_over_without_waiting(bootstrap: str) -> None:
    consumer = joined(bootstrap)
    try:
        took = gather_ten_more(bootstrap, consumer)
        # Asked for a whole batch, consume() waited out its whole timeout (1 s) for 490
        # messages that were not coming; the batch bound (200 ms) is not a wait either
        # while the writer is free.
        assert took < 0.5, f"a batch of 10 fetched messages took {took:.2f} s to gather"
    finally:
        close(consumer)


def test_while_the_writer_is_busy_a_batch_waits_up_to_its_time_bound(bootstrap: str) -> None:
    consumer = joined(bootstrap)
    try:
        # The writer thread busy for longer than a batch may wait (a slow write).
        busy = consumer._writer.submit(time.sleep, 3.0)
        consumer._in_flight = (PreparedBatch([]), busy, {})  # type: ignore[assignment]
        took = gather_ten_more(bootstrap, consumer)
        assert 0.18 <= took < 1.0, f"gathering took {took:.2f} s, not about 200 ms"
    finally:
        close(consumer)

"""How the consumer cuts batches, against librdkafka's mock cluster: a batch does not wait
for messages that are not there while the writer is free (ADR 0065)."""

import time
import uuid

import pytest

from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.mock import create_topics
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


def test_fewer_messages_than_a_batch_are_handed_over_without_waiting(bootstrap: str) -> None:
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
    try:
        produce(bootstrap, topic, [event(number) for number in range(10)])
        deadline = time.monotonic() + 60
        while len(consumer.pending) < 10 and time.monotonic() < deadline:
            consumer._gather()  # joins the group, is assigned the partitions, reads
        assert len(consumer.pending) == 10
        consumer.pending = []

        # Ten more, fetched by librdkafka in the background while nothing is in flight.
        produce(bootstrap, topic, [event(number) for number in range(10, 20)])
        time.sleep(1.5)
        started = time.monotonic()
        consumer._gather()
        took = time.monotonic() - started
        assert len(consumer.pending) == 10
        # Asked for a whole batch, consume() waited out its whole timeout (1 s) for 490
        # messages that were not coming; the batch bound (200 ms) is not a wait either
        # while the writer is free.
        assert took < 0.5, f"a batch of 10 fetched messages took {took:.2f} s to gather"
    finally:
        consumer.consumer.close()
        consumer._writer.shutdown(wait=True)

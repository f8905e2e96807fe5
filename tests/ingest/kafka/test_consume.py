"""Kafka ingest end to end in one process: the real producers (openlineage-python's
KafkaTransport unchanged, a plain confluent-kafka producer) write to librdkafka's mock
cluster; ``IngestConsumer`` stores what it reads in the real PostgreSQL."""

import uuid
from typing import Any

import orjson
import pytest
from celery import current_app
from confluent_kafka import Producer
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.transport.kafka import KafkaConfig as TransportConfig
from openlineage.client.transport.kafka import KafkaTransport

from ingest import enqueue
from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.models import ConsumerLag, DeadLetter, Event
from tests.ingest.kafka.cluster import committed_total, produce

# Transactional: the consumer commits its batches itself (send_events refuses to join the
# transaction a plain django_db test runs in).
pytestmark = pytest.mark.django_db(transaction=True)


def consume(
    bootstrap: str, topics: str, group: str | None = None, **overrides: Any
) -> IngestConsumer:
    """Run one consumer of the group until it has been idle for a second."""
    config = kafka_config.load(
        {
            "BOOTSTRAP_SERVERS": bootstrap,
            "TOPICS": topics.split(","),
            "GROUP_ID": group or f"tests-{uuid.uuid4().hex[:8]}",
            "PORT": 0,
            **overrides,
        }
    )
    consumer = IngestConsumer(config)
    consumer.run(exit_when_idle=1.0)
    return consumer


def transport(bootstrap: str, topic: str) -> OpenLineageClient:
    config = TransportConfig.from_dict(
        {"config": {"bootstrap.servers": bootstrap}, "topic": topic, "flush": True}
    )
    return OpenLineageClient(transport=KafkaTransport(config))


def ol_event(number: int) -> RunEvent:
    return RunEvent(
        eventType=RunState.START,
        eventTime=f"2026-11-29T10:00:{number % 60:02d}.000Z",
        run=Run(runId=str(uuid.uuid4())),
        job=Job(namespace="kafka-tests", name=f"job-{number}"),
        producer="https://example.com/kafka-tests",
    )


def test_kafka_transport_events_are_stored_and_enqueued_on_commit(
    bootstrap: str, monkeypatch: pytest.MonkeyPatch, no_task_waiting: None
) -> None:
    sent: list[int] = []

    def taken_at_once(name: str, args: list[list[int]]) -> None:
        # As if a worker took each task at once (ADR 0053: while one waits, the next
        # publish is skipped): the batches are published one by one, however they fall.
        sent.extend(args[0])
        enqueue.derive_task_started()

    monkeypatch.setattr(current_app, "send_task", taken_at_once)
    client = transport(bootstrap, "lineage")
    events = [ol_event(number) for number in range(25)]
    for event in events:
        client.emit(event)
    group = f"tests-{uuid.uuid4().hex[:8]}"
    consume(bootstrap, "lineage", group)
    stored = Event.objects.filter(job_namespace="kafka-tests")
    run_ids = {str(event.run.runId) for event in events}
    assert set(stored.values_list("run_id", flat=True)) == run_ids
    assert enqueue.wait_until_published(timeout=10)
    assert set(sent) == set(Event.objects.values_list("id", flat=True))  # after commit
    assert committed_total(bootstrap, group, "lineage") == Event.objects.count()


def test_metadata_records_from_a_plain_producer_are_stored_once(bootstrap: str) -> None:
    records = [
        {"subject": "model-x", "action": "promoted", "additionalValues": {"stage": "prod"}},
        {"resource": "r-1", "subject": "table", "action": "audited", "timestamp": 1764410400},
    ]
    produce(bootstrap, "metadata-records", records)
    consume(bootstrap, "metadata-records:metadata")
    stored = list(Event.objects.filter(kind="metadata").order_by("id"))
    assert len(stored) == 2
    assert {event.payload["subject"] for event in stored} == {"model-x", "table"}
    # Read again from the start by another group (a redelivery): nothing stored twice.
    consume(bootstrap, "metadata-records:metadata")
    assert Event.objects.filter(kind="metadata").count() == 2


def test_a_metadata_record_in_a_message_without_a_time_is_stored_once(bootstrap: str) -> None:
    """docs/ingest.md: a record without ``timestamp`` takes the message's, "so that a
    redelivered message is the same record and is stored once". A message with no time of
    its own (-1: Kafka's pre-0.10 format, or a producer that sets it) took the time it was
    read instead, and each redelivery was stored again as a new record."""
    producer = Producer({"bootstrap.servers": bootstrap})
    record = {"subject": "untimed", "action": "audited"}
    producer.produce("metadata-records", value=orjson.dumps(record), timestamp=-1)
    assert producer.flush(30) == 0
    consume(bootstrap, "metadata-records:metadata")
    consume(bootstrap, "metadata-records:metadata")  # another group: a redelivery
    (stored,) = Event.objects.filter(kind="metadata", payload__subject="untimed")
    # It keeps no timestamp it was not sent; its event time is when it was first read.
    assert "timestamp" not in stored.payload and stored.event_time is not None


def test_bad_messages_are_dead_letters_and_do_not_block_the_partition(
    bootstrap: str, settings: Any
) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "MAX_REQUEST_BYTES": 4096, "MAX_JSON_DEPTH": 8}
    good = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-29T10:00:00Z",
        "run": {"runId": str(uuid.uuid4()), "facets": {"parent": {"bad": True}}},
        "job": {"namespace": "dead-letter-tests", "name": "after"},
        "producer": "https://example.com/x",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    deep: Any = {}
    for _ in range(12):
        deep = {"x": deep}
    bad = [
        b"not json at all",
        b'{"eventTime": "2026-11-29T10:00:00Z", "password": "hunter2"',
        b"[" + b"1," * 3000 + b"1]",
        {"eventTime": "2026-11-29T10:00:00Z", "run": {"runId": "r"}, "job": deep},
        {"eventTime": "yesterday", "run": {"runId": "r"}, "job": {"namespace": "n", "name": 1}},
    ]
    produce(bootstrap, "lineage-2", [*bad, good], key=b"the-key")
    group = f"tests-{uuid.uuid4().hex[:8]}"
    consume(bootstrap, "lineage-2", group, DEAD_LETTER_BYTES=1024)
    letters = {letter.reason_code: letter for letter in DeadLetter.objects.all()}
    assert set(letters) == {"invalid-json", "payload-too-large", "too-deep", "invalid-event"}
    assert DeadLetter.objects.count() == 5
    too_large = letters["payload-too-large"]
    assert too_large.topic == "lineage-2" and bytes(too_large.key) == b"the-key"
    assert too_large.value_size == 6003 and bytes(too_large.value) == bad[2][:1024]  # type: ignore[index]
    assert not too_large.complete and letters["too-deep"].complete
    invalid = letters["invalid-event"]
    assert "/eventTime" in invalid.reason and "/job/name" in invalid.reason
    # The good event after them was stored, with its facet problem as a warning.
    stored = Event.objects.get(job_namespace="dead-letter-tests")
    assert stored.facet_problems
    assert committed_total(bootstrap, group, "lineage-2") == 6


def test_lag_is_reported_per_partition(bootstrap: str) -> None:
    produce(bootstrap, "lineage", [ol_event_dict(n) for n in range(8)])
    group = f"tests-{uuid.uuid4().hex[:8]}"
    consume(bootstrap, "lineage", group)
    rows = list(ConsumerLag.objects.filter(group_id=group, topic="lineage"))
    assert sorted(row.partition for row in rows) == [0, 1, 2, 3]
    assert all(row.lag == 0 for row in rows)
    assert sum(row.committed_offset for row in rows) == committed_total(bootstrap, group, "lineage")


def ol_event_dict(number: int) -> dict[str, Any]:
    return {
        "eventType": "START",
        "eventTime": "2026-11-29T10:00:00Z",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "lag-tests", "name": f"job-{number}"},
        "producer": "https://example.com/x",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }

"""A message delivered again (the consumer restarted before its commit, a rebalance moved
its partition) stores nothing twice, and ``lineage_kafka_messages_total`` says so: it is
counted as a duplicate, never as a second dead letter or a second created event."""

import uuid

import orjson
import pytest
from django.db import DatabaseError, connection

from ingest.kafka.messages import Message
from ingest.kafka.mock import create_topics
from ingest.kafka.storage import prepare_batch, write_batch
from ingest.metrics import process_registry
from ingest.models import DeadLetter
from tests.ingest.kafka.cluster import produce
from tests.ingest.kafka.test_consume import consume, ol_event_dict

pytestmark = pytest.mark.django_db(transaction=True)

OUTCOMES = ("created", "duplicate", "dead_letter")


def counted(topic: str) -> dict[str, float]:
    registry = process_registry()
    return {
        outcome: registry.get_sample_value(
            "lineage_kafka_messages_total", {"topic": topic, "outcome": outcome}
        )
        or 0.0
        for outcome in OUTCOMES
    }


def test_a_redelivered_dead_letter_is_counted_once(bootstrap: str) -> None:
    topic = f"redelivered-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic])
    produce(bootstrap, topic, [ol_event_dict(200), b"not json", ol_event_dict(201), b"[]"])
    consume(bootstrap, topic)
    assert counted(topic) == {"created": 2, "duplicate": 0, "dead_letter": 2}
    # Every message again, as the next owner of a partition whose commit never happened
    # reads it: a second group starts from the oldest message, as that owner does.
    consume(bootstrap, topic)
    assert DeadLetter.objects.filter(topic=topic).count() == 2  # stored once
    assert counted(topic) == {"created": 2, "duplicate": 2 + 2, "dead_letter": 2}


def ingested(outcome: str) -> float:
    sample = process_registry().get_sample_value(
        "lineage_ingest_events_total", {"kind": "run", "outcome": outcome}
    )
    return sample or 0.0


def test_a_batch_written_again_after_its_dead_letters_failed_counts_its_events_once() -> None:
    """The events' INSERT and the dead letters' are two statements, each committed: when
    the second fails (here a constraint PostgreSQL enforces, as a lost connection would),
    the consumer writes the batch again. Its events, stored by the first attempt, are not
    duplicates of themselves: counted once, as created, in both counters."""
    topic = f"retried-{uuid.uuid4().hex[:8]}"
    kinds = {topic: "openlineage"}
    good = Message(topic, 0, 0, None, orjson.dumps(ol_event_dict(300)), None)
    prepared = prepare_batch([good, Message(topic, 0, 1, None, b"not json", None)], kinds)
    before = {outcome: ingested(outcome) for outcome in ("created", "duplicate")}
    refuse = f"ALTER TABLE ingest_dead_letter ADD CONSTRAINT refuse_{topic.replace('-', '_')} "
    with connection.cursor() as cursor:
        cursor.execute(refuse + f"CHECK (topic <> '{topic}') NOT VALID")
    try:
        with pytest.raises(DatabaseError):
            write_batch(prepared, kinds, 4096)
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                f"ALTER TABLE ingest_dead_letter DROP CONSTRAINT refuse_{topic.replace('-', '_')}"
            )
    outcome = write_batch(prepared, kinds, 4096)  # as _store_with_retry does
    assert (outcome.created, outcome.duplicates, len(outcome.dead_letters)) == (1, 0, 1)
    assert outcome.by_topic == {topic: (1, 0)}
    assert ingested("created") - before["created"] == 1
    assert ingested("duplicate") - before["duplicate"] == 0

"""How the consumer cuts batches, against librdkafka's mock cluster: a batch does not wait
for messages that are not there while the database is free, and waits for more, up to its
time bound, while the database is still storing the batch before (ADR 0065, 0072)."""

import time
import uuid

import orjson
import pytest

from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.messages import Message
from ingest.kafka.mock import create_topics
from ingest.kafka.storage import finish_batch, prepare_batch, send_batch
from tests.ingest.helpers import second_connection
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


def test_fewer_messages_than_a_batch_are_handed_over_without_waiting(bootstrap: str) -> None:
    consumer = joined(bootstrap)
    try:
        took = gather_ten_more(bootstrap, consumer)
        # Asked for a whole batch, consume() waited out its whole timeout (1 s) for 490
        # messages that were not coming; the batch bound (200 ms) is not a wait either
        # while the database is free.
        assert took < 0.5, f"a batch of 10 fetched messages took {took:.2f} s to gather"
    finally:
        close(consumer)


def test_while_the_database_is_storing_a_batch_waits_up_to_its_time_bound(
    bootstrap: str,
) -> None:
    consumer = joined(bootstrap)
    try:
        with second_connection() as other:
            with other.transaction():
                # A slow write: the batch before is sent, and its INSERT waits on a lock.
                other.execute("LOCK TABLE ingest_event IN SHARE MODE")
                topic = next(iter(consumer.config.topics))
                slow = Message(topic, 0, 0, None, orjson.dumps(event(99)), None)
                in_flight = send_batch(prepare_batch([slow], consumer.config.topics))
                consumer._in_flight = (in_flight, {"fill": 0.0, "prepare": 0.0, "sent": 0.0})
                took = gather_ten_more(bootstrap, consumer)
                assert not in_flight.answered()
            outcome = finish_batch(in_flight, consumer.config.topics, 4096)
        assert 0.18 <= took < 1.0, f"gathering took {took:.2f} s, not about 200 ms"
        assert outcome.created == 1
    finally:
        close(consumer)


def test_an_idle_consumer_finishes_the_batch_in_flight_at_once(bootstrap: str) -> None:
    """The batch in flight is committed when it is finished; with nothing more to read,
    the loop is back to finish it at once, not after the idle wait (a second)."""
    consumer = joined(bootstrap)
    try:
        produce(bootstrap, next(iter(consumer.config.topics)), [event(n) for n in range(10)])
        deadline = time.monotonic() + 30
        while len(consumer.pending) < 10 and time.monotonic() < deadline:
            consumer._gather()
        consumer._hand_over()  # sent, not committed
        assert consumer._in_flight is not None
        started = time.monotonic()
        consumer._gather()  # nothing to read
        took = time.monotonic() - started
        assert not consumer.pending and took < 0.5, f"an idle gather took {took:.2f} s"
        consumer._finish_in_flight()
        assert consumer._in_flight is None and consumer.stored_messages == 10
    finally:
        close(consumer)


@pytest.mark.parametrize("held", ["in flight", "in hand"])
def test_a_stop_stores_and_commits_the_batch_it_holds(bootstrap: str, held: str) -> None:
    """docs/ingest.md: "SIGTERM stores and commits the batch in hand and leaves the group"
    (the command's SIGTERM sets ``stop``): a batch sent to the database and not finished,
    or one gathered and not sent. The fault tests cannot tell this from a redelivery to the
    next owner, which stores nothing twice: here nobody reads the topic again."""
    from ingest.models import Event
    from tests.ingest.kafka.cluster import committed_total

    consumer = joined(bootstrap)  # the first ten are dropped: committed only with later ones
    topic, group = next(iter(consumer.config.topics)), consumer.config.group_id
    gather_ten_more(bootstrap, consumer)
    if held == "in flight":
        consumer._hand_over()  # its INSERT sent, its answer not read, nothing committed
        assert consumer._in_flight is not None and not consumer.pending
    consumer.stop.set()  # SIGTERM
    consumer.subscribe = lambda: None  # type: ignore[method-assign]  # subscribed already
    consumer.run()
    assert Event.objects.filter(job_namespace="kafka-batching").count() == 10
    assert committed_total(bootstrap, group, topic) == 20  # the dropped ten are below

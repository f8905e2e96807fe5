"""The admin's dead-letter replay runs in the web process: what it holds is bounded by the
ingest's own body limit (``LINEAGE_MAX_REQUEST_BYTES``), whatever a message's size and
however many letters are replayed at once (docs/ingest.md, ADR 0162).

Measured with tracemalloc (Python's allocations: the values read from PostgreSQL and from
Kafka are Python bytes) around the admin's action, as a steward runs it."""

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from django.contrib.auth.models import User
from django.test import Client

from ingest.kafka.messages import Message, read_message
from ingest.models import DeadLetter
from tests.ingest.kafka.cluster import produce
from tests.ingest.kafka.test_consume import consume, ol_event_dict

pytestmark = pytest.mark.django_db(transaction=True)

MIB = 1 << 20
LIMIT = MIB  # LINEAGE_MAX_REQUEST_BYTES in these tests


@pytest.fixture
def steward() -> Client:
    user = User.objects.create_superuser("replayer", "r@example.com", "pw-replayer")
    client = Client()
    client.force_login(user)
    return client


def peak_bytes(action: Callable[[], Any]) -> tuple[int, Any]:
    """The most Python held at once while ``action`` ran, above what it held before."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = action()
        return tracemalloc.get_traced_memory()[1] - before, result
    finally:
        tracemalloc.stop()


def last_message(topic: str, bootstrap: str) -> dict[str, int]:
    """The partition and offset of the one message ``topic`` holds."""
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "replay-memory"})
    try:
        for partition in range(4):
            end = reader.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
            if end:
                return {"partition": partition, "offset": end - 1}
    finally:
        reader.close()
    raise AssertionError(f"{topic} holds no message")


def replay_in_admin(client: Client, ids: list[int]) -> str:
    """The admin's action on ``ids`` (measured the second time: the first loads the
    admin's templates and modules, whatever the letters hold)."""
    answer = client.post(
        "/admin/ingest/deadletter/",
        {"action": "replay_selected", "_selected_action": ids},
        follow=True,
    )
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_value_over_the_limit_is_not_read(bootstrap: str, settings: Any, steward: Client) -> None:
    """Two 3 MiB messages, kept in part: reading them again from Kafka to refuse them as too
    large held each whole in the web process (with a larger receive.message.max.bytes, any
    size). One's size is known; the other's is not (-1: a letter librdkafka could not hand
    over), and its reader refuses the response unread. A third, 2 MiB, kept whole, is not
    read from the table either."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_REQUEST_BYTES": LIMIT}
    big = {**ol_event_dict(500), "job": {"namespace": "big", "name": "x" * (3 * MIB)}}
    produce(bootstrap, "lineage-2", [big], **{"message.max.bytes": 8 * MIB})
    consume(bootstrap, "lineage-2", DEAD_LETTER_BYTES=256)
    known = DeadLetter.objects.get(reason_code="payload-too-large", value_size__gt=3 * MIB)
    # The other where no consumer reads it (the mock cluster answers a fetch with all of a
    # partition's batches, which two such messages make more than the consumer receives).
    produce(bootstrap, "metadata-records", [big], **{"message.max.bytes": 8 * MIB})
    unknown = DeadLetter.objects.create(
        topic="metadata-records",
        **last_message("metadata-records", bootstrap),
        kind="openlineage",
        value=b"",
        value_size=-1,
        reason_code="kafka-msg-size-too-large",
        reason="too large to receive",
    )
    # Kept whole by a consumer whose LINEAGE_CONSUMER_DEAD_LETTER_BYTES is larger.
    whole = DeadLetter.objects.create(
        topic="lineage-2",
        partition=0,
        offset=20_000,
        kind="openlineage",
        value=b"x" * (2 * MIB),
        value_size=2 * MIB,
        reason_code="payload-too-large",
        reason="over the limit",
    )
    settings.LINEAGE_KAFKA = {
        **settings.LINEAGE_KAFKA,
        "BOOTSTRAP_SERVERS": bootstrap,
        "TOPICS": ["lineage-2"],
    }
    ids = [known.id, unknown.id, whole.id]
    replay_in_admin(steward, ids)
    started = time.monotonic()
    peak, page = peak_bytes(lambda: replay_in_admin(steward, ids))
    took = time.monotonic() - started
    assert peak < LIMIT, f"the replay held {peak} bytes at once"
    assert "too large 3 (values over LINEAGE_MAX_REQUEST_BYTES (1,048,576 bytes)" in page
    assert took < 5, f"the replay took {took:.1f} s: it waited for a response it refused"
    assert not DeadLetter.objects.filter(id__in=ids, replayed_at__isnull=False)


def test_many_letters_kept_whole_are_read_a_bounded_chunk_at_a_time(
    settings: Any, steward: Client
) -> None:
    """Twelve values of 200 KiB, each kept whole (under the limit): the 500 a replay takes
    were all read at once, twice (the admin's list and the replay's)."""
    settings.LINEAGE = {**settings.LINEAGE, "MAX_REQUEST_BYTES": LIMIT}
    value = b'"' + b"x" * (200 * 1024) + b'"'  # JSON, but no event: refused again
    letters = DeadLetter.objects.bulk_create(
        DeadLetter(
            topic="lineage-2",
            partition=0,
            offset=10_000 + number,
            kind="openlineage",
            value=value,
            value_size=len(value),
            reason_code="invalid-event",
            reason="not an object",
        )
        for number in range(12)
    )
    ids = [letter.id for letter in letters]
    del letters
    # What the pipeline itself holds while it reads one value (as it does for one body
    # over HTTP): the replay adds at most a chunk of values (the limit) to it.
    pipeline, _ = peak_bytes(lambda: read_message(Message("t", 0, 0, None, value, None), "x"))
    replay_in_admin(steward, ids)  # refused again: still open, replayed again below
    peak, page = peak_bytes(lambda: replay_in_admin(steward, ids))
    bound = LIMIT + pipeline + 4 * len(value)  # and a value's copies on its way
    assert peak < bound, f"the replay held {peak} bytes at once (bound {bound})"
    assert "refused again 12" in page

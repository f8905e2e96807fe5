"""Store one batch of Kafka messages: the events by the statement the batch endpoint uses
(``ingest.services``), the refusals as dead letters.

Each of the two is one statement, atomic and committed on its own (autocommit), and each
is idempotent: events by digest, dead letters by (topic, partition, offset). So the
batch needs no transaction around them, and a batch of good messages is one round trip:
whatever happens between the two statements and the offset commit, a redelivery stores
nothing twice (ADR 0062). The round trip comes in two halves, ``send_batch`` and
``finish_batch``, so that the consumer prepares its next batch while the database stores
this one (ADR 0072).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import connection

from ingest.kafka.messages import Message, Refusal, read_message
from ingest.metrics import count_ingested
from ingest.services import (
    EventsInFlight,
    SerialisedEvent,
    StoredEvent,
    finish_events,
    send_events,
)

_INSERT_DEAD_LETTERS = """
INSERT INTO ingest_dead_letter
    (topic, partition, "offset", kind, key, value, value_size, message_time, reason_code,
     reason, received_at)
SELECT * , now() FROM unnest(
    %s::text[], %s::int[], %s::bigint[], %s::text[], %s::bytea[], %s::bytea[], %s::int[],
    %s::timestamptz[], %s::text[], %s::text[]
)
ON CONFLICT (topic, partition, "offset") DO NOTHING
RETURNING topic, partition, "offset"
"""


@dataclass
class BatchOutcome:
    created: int = 0
    duplicates: int = 0
    # topic → (created, duplicates): a batch holds several topics' messages.
    # Events and dead letters alike: a message delivered again (a restart before the
    # commit, a rebalance) stores nothing and is counted here, never as created again.
    by_topic: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Only the dead letters this batch recorded, by the INSERT's answer: one already
    # recorded (the same position delivered again) is a duplicate, counted in ``by_topic``.
    dead_letters: list[tuple[Message, Refusal]] = field(default_factory=list)


@dataclass
class PreparedBatch:
    """A batch read and checked (CPU only), ready to be written (database only)."""

    messages: list[Message]
    events: list[SerialisedEvent] = field(default_factory=list)
    event_topics: list[str] = field(default_factory=list)  # each event's topic, in order
    dead_letters: list[tuple[Message, Refusal]] = field(default_factory=list)
    # The events' INSERT's answer, once it committed. When the dead letters' INSERT then
    # fails, the batch is written again: its events are not sent again, so that they are
    # counted once, as what the first answer said (created), not as duplicates of themselves.
    stored: list[StoredEvent] | None = None


def prepare_batch(messages: Sequence[Message], kinds: dict[str, str]) -> PreparedBatch:
    """Parse, validate and serialise each message (``kinds``: topic → openlineage/metadata)."""
    prepared = PreparedBatch(list(messages))
    for message in messages:
        result = read_message(message, kinds[message.topic])
        if isinstance(result, Refusal):
            prepared.dead_letters.append((message, result))
        else:
            prepared.events.append(result)
            prepared.event_topics.append(message.topic)
    return prepared


@dataclass
class BatchInFlight:
    """A prepared batch whose events' INSERT is on its way (none when it has no events, or
    when they are stored already)."""

    prepared: PreparedBatch
    events: EventsInFlight | None

    def answered(self) -> bool:
        return self.events is None or self.events.answered()


def send_batch(prepared: PreparedBatch) -> BatchInFlight:
    """Send the batch's INSERT without waiting for it. Until ``finish_batch``, the
    connection is the batch's."""
    unsent = prepared.events and prepared.stored is None
    return BatchInFlight(prepared, send_events(prepared.events) if unsent else None)


def finish_batch(
    in_flight: BatchInFlight, kinds: dict[str, str], dead_letter_bytes: int
) -> BatchOutcome:
    """Wait for the batch sent, then store its dead letters. Raises only when the database
    does; then nothing of the batch may be acknowledged to Kafka. Safe to repeat (by
    sending the prepared batch again)."""
    prepared = in_flight.prepared
    if prepared.stored is None:
        prepared.stored = finish_events(in_flight.events) if in_flight.events is not None else []
        count_ingested([event.record for event in prepared.events], prepared.stored)
    stored = prepared.stored
    outcome = BatchOutcome()
    outcome.created = sum(item.created for item in stored)
    outcome.duplicates = len(stored) - outcome.created
    for topic, item in zip(prepared.event_topics, stored, strict=True):
        created, duplicates = outcome.by_topic.get(topic, (0, 0))
        outcome.by_topic[topic] = (created + item.created, duplicates + (not item.created))
    if prepared.dead_letters:
        recorded = record_dead_letters(prepared.dead_letters, kinds, dead_letter_bytes)
        for message, refusal in prepared.dead_letters:
            if (message.topic, message.partition, message.offset) in recorded:
                outcome.dead_letters.append((message, refusal))
                continue
            outcome.duplicates += 1
            created, duplicates = outcome.by_topic.get(message.topic, (0, 0))
            outcome.by_topic[message.topic] = (created, duplicates + 1)
    return outcome


def write_batch(
    prepared: PreparedBatch, kinds: dict[str, str], dead_letter_bytes: int
) -> BatchOutcome:
    """Store a prepared batch and wait for it: ``send_batch`` then ``finish_batch``."""
    return finish_batch(send_batch(prepared), kinds, dead_letter_bytes)


def record_dead_letters(
    letters: Sequence[tuple[Message, Refusal]], kinds: dict[str, str], limit: int
) -> set[tuple[str, int, int]]:
    """One INSERT of every refused message, each once (a redelivered one is not repeated);
    the positions (topic, partition, offset) it recorded now, which a redelivered one is not."""
    rows = [
        (
            message.topic,
            message.partition,
            message.offset,
            kinds[message.topic],
            message.key[:limit] if message.key is not None else None,
            (message.value or b"")[:limit],
            message.size if message.size is not None else len(message.value or b""),
            message.timestamp,
            refusal.code[:32],
            refusal.reason[:4000].replace("\x00", "\ufffd"),
        )
        for message, refusal in letters
    ]
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_DEAD_LETTERS, [list(column) for column in zip(*rows, strict=True)])
        return {(topic, partition, offset) for topic, partition, offset in cursor.fetchall()}

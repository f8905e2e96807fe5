"""One Kafka message → one storable event, or the reason it cannot be stored.

The same line as HTTP ingest (ADR 0004): the value is parsed by ``ingest.parsing`` (size,
strict JSON, nesting depth), checked by the same validators, serialised and size-checked
by ``ingest.services``. Only what makes a message unusable is a refusal; facet problems
are stored with the event as warnings. An error of our own while reading a message (a
bug) refuses that message too, so that it cannot stop its partition; replaying it after
the fix stores it.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from core.problems import Problem
from ingest.adapters import metadata_record
from ingest.kafka.config import METADATA
from ingest.parsing import parse_json
from ingest.services import SerialisedEvent, oversized, serialise
from ingest.validation import validate_openlineage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refusal:
    code: str  # the problem's slug (invalid-json, too-deep, invalid-event, payload-too-large)
    reason: str


@dataclass(frozen=True)
class Message:
    """What the consumer keeps of a Kafka message."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: datetime | None  # the producer's (or broker's) time, when the message has one
    # Refused as it was read, before its value was looked at: a timestamp that is no date,
    # a value over the limit (kept only in part), a message librdkafka could not hand over.
    refusal: Refusal | None = None
    # The size of the whole value when ``value`` holds only a prefix of it; -1 when the
    # value never reached the consumer (librdkafka refused it: see ``unreadable``).
    size: int | None = None


def problem_reason(problem: Problem) -> str:
    if not problem.errors:
        return problem.detail or problem.title
    return "; ".join(f"{error.path}: {error.message}" for error in problem.errors[:20])


def read_message(message: Message, kind: str) -> SerialisedEvent | Refusal:
    """The message's event, serialised as it will be stored, or why it cannot be."""
    if message.refusal is not None:
        return message.refusal
    value = message.value
    if not value:
        return Refusal("empty", "the message has no value")
    limit = settings.LINEAGE["MAX_REQUEST_BYTES"]
    if len(value) > limit:
        return Refusal("payload-too-large", f"the value is {len(value)} bytes, over {limit}")
    try:
        document = parse_json(value)
        if kind == METADATA:
            # A message with no time (Kafka's pre-0.10 format, a producer's -1) gives no
            # timestamp that a redelivery would repeat: the record keeps none, its event
            # time is when it was read (stored once, so the first reading's).
            record = metadata_record(
                _metadata_defaults(document, message),
                now=message.timestamp,
                fill_timestamp=message.timestamp is not None,
            )
        else:
            record = validate_openlineage(document)
        event = serialise(record)
    except Problem as problem:
        return Refusal(problem.slug, problem_reason(problem))
    except Exception as error:  # a bug of ours must not stop the partition either
        logger.exception(
            "kafka_message_unreadable topic=%s offset=%d", message.topic, message.offset
        )
        return Refusal("unexpected-error", f"{type(error).__name__}: {error}"[:1000])
    if oversized(event):
        limit = settings.LINEAGE["MAX_EVENT_BYTES"]
        return Refusal("payload-too-large", f"the event is larger than {limit} bytes")
    return event


def _metadata_defaults(document: object, message: Message) -> object:
    """A record without ``resource`` gets one derived from the message's position, and one
    without ``timestamp`` the message's time (``metadata_record`` is given it as ``now``),
    so that a redelivered message is the same record, with the same digest, stored once.
    Over HTTP the defaults are a random id and the time of receipt."""
    if isinstance(document, dict) and document.get("resource") in (None, ""):
        position = f"kafka:{message.topic}/{message.partition}/{message.offset}"
        return {**document, "resource": uuid.uuid5(uuid.NAMESPACE_URL, position).hex}
    return document


def message_time(timestamp: tuple[int, int]) -> datetime | None:
    """confluent-kafka's ``(type, milliseconds)``; type 0 means the message has none.
    Raises ``ValueError`` for a time that is no date here (past the year 9999): the
    producer chooses it, so ``kept`` refuses the message instead."""
    kind, milliseconds = timestamp
    if kind == 0 or milliseconds < 0:
        return None
    try:
        return datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    except (OverflowError, OSError) as error:
        raise ValueError(str(error)) from error


def kept(
    topic: str,
    partition: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    timestamp: tuple[int, int],
    prefix_bytes: int,
) -> Message:
    """What the consumer keeps of a message read from Kafka, whatever the producer put in
    it: never raises. A value over ``LINEAGE_MAX_REQUEST_BYTES`` is refused here and only
    the prefix a dead letter keeps is held until its batch is stored (holding the whole
    value, as many of them as a batch takes, is what producers would size the consumer's
    memory by); a key is held only to that prefix too, since only a dead letter keeps it."""
    refusal: Refusal | None = None
    size: int | None = None
    try:
        moment = message_time(timestamp)
    except ValueError as error:
        moment = None
        refusal = Refusal(
            "invalid-timestamp", f"the message's timestamp ({timestamp[1]} ms) is no date: {error}"
        )
    limit = settings.LINEAGE["MAX_REQUEST_BYTES"]
    if value is not None and len(value) > limit:
        if refusal is None:
            refusal = Refusal("payload-too-large", f"the value is {len(value)} bytes, over {limit}")
        size, value = len(value), value[:prefix_bytes]
    if key is not None and len(key) > prefix_bytes:
        key = key[:prefix_bytes]
    return Message(topic, partition, offset, key, value, moment, refusal, size)


def unreadable(topic: str, partition: int, offset: int, code: str, reason: str) -> Message:
    """A message librdkafka could not hand over (a batch it cannot inflate, one larger
    than it may receive, one that fails its checksum): refused with librdkafka's reason,
    its value unknown (size -1), so that a replay reads it from Kafka again."""
    return Message(topic, partition, offset, None, None, None, Refusal(code, reason), -1)


def kafka_refusal(error: Any) -> Refusal:
    """The refusal for a message librdkafka read and could not hand over (its KafkaError):
    ``kafka-bad-compression`` and the like, with librdkafka's reason."""
    code = "kafka-" + error.name().lower().strip("_").replace("_", "-")
    return Refusal(code[:32], error.str()[:4000])

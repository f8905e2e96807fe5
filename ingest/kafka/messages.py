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

from django.conf import settings

from core.problems import Problem
from ingest.adapters import metadata_record
from ingest.kafka.config import METADATA
from ingest.parsing import parse_json
from ingest.services import SerialisedEvent, oversized, serialise
from ingest.validation import validate_openlineage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Message:
    """What the consumer keeps of a Kafka message."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: datetime | None  # the producer's (or broker's) time, when the message has one


@dataclass(frozen=True)
class Refusal:
    code: str  # the problem's slug (invalid-json, too-deep, invalid-event, payload-too-large)
    reason: str


def problem_reason(problem: Problem) -> str:
    if not problem.errors:
        return problem.detail or problem.title
    return "; ".join(f"{error.path}: {error.message}" for error in problem.errors[:20])


def read_message(message: Message, kind: str) -> SerialisedEvent | Refusal:
    """The message's event, serialised as it will be stored, or why it cannot be."""
    value = message.value
    if not value:
        return Refusal("empty", "the message has no value")
    limit = settings.LINEAGE["MAX_REQUEST_BYTES"]
    if len(value) > limit:
        return Refusal("payload-too-large", f"the value is {len(value)} bytes, over {limit}")
    try:
        document = parse_json(value)
        if kind == METADATA:
            record = metadata_record(_metadata_defaults(document, message), now=message.timestamp)
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
    """confluent-kafka's ``(type, milliseconds)``; type 0 means the message has none."""
    kind, milliseconds = timestamp
    if kind == 0 or milliseconds < 0:
        return None
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC)

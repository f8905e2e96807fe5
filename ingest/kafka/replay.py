"""Replay dead letters: run each through the pipeline again (after a steward fixed a rule,
a limit was raised or the code was upgraded). A stored one is marked replayed with the
event it became; one refused again gets the new reason. A value kept only in part is read
again from Kafka, at its offset, while the topic still holds it, by the process that
replays (the web server, for the admin's action): one whose Kafka settings are missing says
so in the report instead of calling the message gone, and one librdkafka still cannot hand
over (a batch it cannot inflate) is refused again with librdkafka's reason.

What a replay holds is bounded by the ingest's own body limit, ``LINEAGE_MAX_REQUEST_BYTES``
(ADR 0162), however large the messages and however many letters are replayed at once: the
pipeline refuses a larger value anyway, so a letter whose value is larger is reported too
large without being read, from the table or from Kafka; the values kept whole are read from
the table a chunk of at most that many bytes at a time; and a value read from Kafka is read
by a reader whose librdkafka takes one response of about that size and nothing ahead of it.
"""

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from django.conf import settings
from django.db import transaction
from django.db.models.functions import Length
from django.utils import timezone

from ingest.kafka import config as kafka_config
from ingest.kafka.messages import Message, Refusal, kafka_refusal, read_message
from ingest.models import DeadLetter
from ingest.services import record_events

# What a fetch's response holds around one message's value: the record batch's header, the
# record's own fields, its key and headers. The replay's reader receives at most the limit
# and this.
_FRAMING = 64 * 1024
# How long the reader waits for the message, as before: a broker that does not answer costs
# a letter this much.
_READ_SECONDS = 10.0
# librdkafka's error (to ``error_cb``) for a response longer than it receives: it reads the
# length and refuses the response unread, then asks again, for ever.
_RESPONSE_TOO_LARGE = re.compile(r"Invalid response size (\d+)")


@dataclass(frozen=True)
class TooLarge:
    """A message larger than the replay reads (librdkafka refused its response unread)."""


@dataclass
class ReplayReport:
    stored: list[int] = field(default_factory=list)  # dead letter ids
    refused: list[int] = field(default_factory=list)
    unavailable: list[int] = field(default_factory=list)  # only a prefix, not read again
    # Values over ``limit`` (LINEAGE_MAX_REQUEST_BYTES): not read, left as they are.
    too_large: list[int] = field(default_factory=list)
    limit: int = 0
    # Why this process could not read Kafka at all (its settings' message); empty when it
    # could, and the unavailable ones are gone from their topic.
    kafka_not_configured: str = ""

    def why_unavailable(self) -> str:
        if self.kafka_not_configured:
            return (
                "only a prefix was kept, and this process cannot read Kafka to fetch the rest: "
                + self.kafka_not_configured
            )
        return "only a prefix was kept and the topic no longer holds the message"

    def why_too_large(self) -> str:
        return (
            f"values over LINEAGE_MAX_REQUEST_BYTES ({self.limit:,} bytes) are refused by "
            "ingest and not read by a replay: raise it to replay them"
        )


def replay(letter_ids: list[int]) -> ReplayReport:
    limit = settings.LINEAGE["MAX_REQUEST_BYTES"]
    report = ReplayReport(limit=limit)
    config: kafka_config.KafkaConfig | None = None
    try:
        config = kafka_config.load()
    except kafka_config.KafkaNotConfigured as error:
        report.kafka_not_configured = str(error)
    # Without their keys and values: those of 500 letters are what the consumer's
    # LINEAGE_CONSUMER_DEAD_LETTER_BYTES lets each hold (``kept``: how much of a value).
    letters = list(
        DeadLetter.objects.filter(id__in=letter_ids, replayed_at__isnull=True)
        .defer("key", "value")
        .annotate(kept=Length("value"))
        .order_by("id")
    )
    for chunk in _chunks(letters, limit):
        values = _values_kept_whole(chunk, limit)
        for letter in chunk:
            if letter.value_size > limit:
                report.too_large.append(letter.id)
                continue
            value: bytes | Refusal | TooLarge | None = values.pop(letter.id, None)
            if value is None and config is not None:
                try:
                    value = fetch_value(letter, config, limit)
                except kafka_config.KafkaNotConfigured as error:
                    # Settings librdkafka refuses: said once, not an error page in the admin.
                    report.kafka_not_configured, config = str(error), None
            _replay_one(letter, value, report)
    return report


def _whole(letter: DeadLetter) -> bool:
    """Whether the table holds the letter's whole value (``DeadLetter.complete``, from the
    length read instead of the value)."""
    return bool(letter.kept == letter.value_size)  # type: ignore[attr-defined]


def _chunks(letters: Sequence[DeadLetter], limit: int) -> Iterator[list[DeadLetter]]:
    """The letters in runs whose values kept whole, read from the table together, add up to
    ``limit`` bytes at most (each is at most ``limit``: a larger one is not read)."""
    chunk: list[DeadLetter] = []
    held = 0
    for letter in letters:
        size = letter.value_size if _whole(letter) and letter.value_size <= limit else 0
        if chunk and held + size > limit:
            yield chunk
            chunk, held = [], 0
        chunk.append(letter)
        held += size
    if chunk:
        yield chunk


def _values_kept_whole(chunk: list[DeadLetter], limit: int) -> dict[int, bytes]:
    """The whole values of the chunk's letters that the table holds whole (one query), but
    those over the limit (a consumer may keep more than the web process replays)."""
    ids = [letter.id for letter in chunk if _whole(letter) and 0 <= letter.value_size <= limit]
    if not ids:
        return {}
    rows = DeadLetter.objects.filter(id__in=ids).values_list("id", "value")
    return {letter_id: bytes(value) for letter_id, value in rows}


def _replay_one(
    letter: DeadLetter, value: bytes | Refusal | TooLarge | None, report: ReplayReport
) -> None:
    if value is None:
        report.unavailable.append(letter.id)
        return
    if isinstance(value, TooLarge):
        report.too_large.append(letter.id)
        return
    if isinstance(value, Refusal):  # still there, and librdkafka still cannot read it
        DeadLetter.objects.filter(id=letter.id).update(reason_code=value.code, reason=value.reason)
        report.refused.append(letter.id)
        return
    message = Message(
        topic=letter.topic,
        partition=letter.partition,
        offset=letter.offset,
        key=None,  # reading a message never looks at its key (``read_message``): not read
        value=value,
        timestamp=letter.message_time,
    )
    result = read_message(message, letter.kind)
    with transaction.atomic():
        if isinstance(result, Refusal):
            DeadLetter.objects.filter(id=letter.id).update(
                reason_code=result.code[:32], reason=result.reason[:4000]
            )
            report.refused.append(letter.id)
            return
        [stored] = record_events([result])
        DeadLetter.objects.filter(id=letter.id).update(
            replayed_at=timezone.now(), replayed_event_id=stored.id
        )
        report.stored.append(letter.id)


def reader_settings(config: kafka_config.KafkaConfig, limit: int) -> dict[str, Any]:
    """The consumer's settings, bounded for a reader of one message of at most ``limit``
    bytes: one response of at most the limit and its framing (librdkafka's bound on what it
    receives and on what a compressed batch inflates to: a larger one is refused again with
    librdkafka's reason), a fetch within it, and nothing fetched ahead (a queue of 1 KiB,
    which librdkafka passes by one fetch at most). A setting that is no number is left to
    librdkafka, which refuses it."""
    reader = {
        **config.consumer_settings(),
        "group.id": f"{config.group_id}-replay",
        "queued.max.messages.kbytes": 1,
        "queued.min.messages": 1,
    }
    response = _smaller(reader, kafka_config.RECEIVE_BYTES, limit + _FRAMING)
    fetch = _smaller(reader, "fetch.max.bytes", response - 512)  # librdkafka's own margin
    _smaller(reader, "max.partition.fetch.bytes", fetch)
    _smaller(reader, "message.max.bytes", fetch)  # librdkafka: at most fetch.max.bytes
    return reader


def _smaller(reader: dict[str, Any], name: str, bound: int) -> int:
    """Lower ``reader[name]`` to ``bound`` (at least librdkafka's minimum, 1000) and say
    what it is; a value that is no number stays, for librdkafka to refuse."""
    try:
        value = min(int(reader[name]), max(1000, bound))
    except (KeyError, TypeError, ValueError):
        return max(1000, bound)
    reader[name] = value
    return value


def fetch_value(
    letter: DeadLetter, config: kafka_config.KafkaConfig, limit: int
) -> bytes | Refusal | TooLarge | None:
    """The whole value of a message, read from Kafka at its offset (no group, no commit);
    librdkafka's refusal when it still cannot hand the message over (a batch it cannot
    inflate: it names the batch's first offset); ``TooLarge`` when its response is larger
    than the reader takes (``reader_settings``); None when the topic no longer holds it."""
    failures: list[KafkaError] = []
    try:
        reader = Consumer({**reader_settings(config, limit), "error_cb": failures.append})
    except KafkaException as error:
        raise kafka_config.KafkaNotConfigured(kafka_config.refused_by_librdkafka(error)) from error
    try:
        reader.assign([TopicPartition(letter.topic, letter.partition, letter.offset)])
        deadline = time.monotonic() + _READ_SECONDS
        while True:
            # In slices, so that a response refused as too large ends the wait at once.
            found = reader.consume(num_messages=1, timeout=0.1)
            for message in found:
                failure, offset = message.error(), message.offset()
                if failure is None:
                    if offset == letter.offset:
                        return bytes(message.value() or b"")
                elif (
                    failure.code() != KafkaError._PARTITION_EOF
                    and (message.topic(), message.partition()) == (letter.topic, letter.partition)
                    and offset is not None
                    and 0 <= offset <= letter.offset
                ):
                    return kafka_refusal(failure)
            # Reported before the errors it causes (the broker's connection is closed).
            if any(_RESPONSE_TOO_LARGE.search(failure.str()) for failure in failures):
                return TooLarge()
            if found or failures or time.monotonic() >= deadline:
                return None  # another message or an error: the topic no longer holds it
    finally:
        reader.close()

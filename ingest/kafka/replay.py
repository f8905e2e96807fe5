"""Replay dead letters: run each through the pipeline again (after a steward fixed a rule,
a limit was raised or the code was upgraded). A stored one is marked replayed with the
event it became; one refused again gets the new reason. A value kept only in part is read
again from Kafka, at its offset, while the topic still holds it, by the process that
replays (the web server, for the admin's action): one whose Kafka settings are missing says
so in the report instead of calling the message gone, and one librdkafka still cannot hand
over (a batch it cannot inflate) is refused again with librdkafka's reason."""

from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from django.db import transaction
from django.utils import timezone

from ingest.kafka import config as kafka_config
from ingest.kafka.messages import Message, Refusal, kafka_refusal, read_message
from ingest.models import DeadLetter
from ingest.services import record_events


@dataclass
class ReplayReport:
    stored: list[int] = field(default_factory=list)  # dead letter ids
    refused: list[int] = field(default_factory=list)
    unavailable: list[int] = field(default_factory=list)  # only a prefix, not read again
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


def replay(letter_ids: list[int]) -> ReplayReport:
    report = ReplayReport()
    config: kafka_config.KafkaConfig | None = None
    try:
        config = kafka_config.load()
    except kafka_config.KafkaNotConfigured as error:
        report.kafka_not_configured = str(error)
    for letter in DeadLetter.objects.filter(id__in=letter_ids, replayed_at__isnull=True):
        if letter.complete:
            value: bytes | Refusal | None = bytes(letter.value)
        else:
            try:
                value = fetch_value(letter, config) if config is not None else None
            except kafka_config.KafkaNotConfigured as error:
                # Settings librdkafka refuses: said once, not an error page in the admin.
                report.kafka_not_configured, config, value = str(error), None, None
        if value is None:
            report.unavailable.append(letter.id)
            continue
        if isinstance(value, Refusal):  # still there, and librdkafka still cannot read it
            DeadLetter.objects.filter(id=letter.id).update(
                reason_code=value.code, reason=value.reason
            )
            report.refused.append(letter.id)
            continue
        message = Message(
            topic=letter.topic,
            partition=letter.partition,
            offset=letter.offset,
            key=bytes(letter.key) if letter.key is not None else None,
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
                continue
            [stored] = record_events([result])
            DeadLetter.objects.filter(id=letter.id).update(
                replayed_at=timezone.now(), replayed_event_id=stored.id
            )
            report.stored.append(letter.id)
    return report


def fetch_value(letter: DeadLetter, config: kafka_config.KafkaConfig) -> bytes | Refusal | None:
    """The whole value of a message, read from Kafka at its offset (no group, no commit);
    librdkafka's refusal when it still cannot hand the message over (a batch it cannot
    inflate: it names the batch's first offset); None when the topic no longer holds it."""
    settings = {**config.consumer_settings(), "group.id": f"{config.group_id}-replay"}
    try:
        reader = Consumer(settings)
    except KafkaException as error:
        raise kafka_config.KafkaNotConfigured(kafka_config.refused_by_librdkafka(error)) from error
    try:
        reader.assign([TopicPartition(letter.topic, letter.partition, letter.offset)])
        for message in reader.consume(num_messages=1, timeout=10):
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
        return None
    finally:
        reader.close()

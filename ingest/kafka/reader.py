"""Reading messages again from Kafka at their offsets, for the dead-letter replay (the web
server, for the admin's action): one message of at most the ingest's body limit at a time
(ADR 0162), and never past the replay's deadline (ADR 0163).

One reader serves a whole replay, assigned to each letter's partition and offset in turn:
its connections and metadata are kept from one letter to the next instead of being made
again for each (a TLS and SASL handshake with the bootstrap broker and the leader). After an
error it is closed and the next letter gets a new one, so that nothing an error left behind
(a response refused as too large, which librdkafka asks for again) is taken for the next.

What a read finds is one of three things, told apart as soon as Kafka says which (ADR 0169):
the message (or librdkafka's refusal of it); ``Gone``, when Kafka answered and the partition
no longer holds it (below its first offset, at or past its end, compacted away, or a topic or
partition the cluster no longer has: nothing will bring it back, and nothing is waited for);
and ``NoAnswer``, when Kafka did not answer in ``READ_SECONDS`` or could not be reached
(nothing is known of the message). The reader is never moved to another offset than the
letter's (``auto.offset.reset`` error): an offset out of range is reported, not skipped.
"""

import re
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from ingest.kafka import config as kafka_config
from ingest.kafka.messages import Refusal, kafka_refusal

# What a fetch's response holds around one message's value: the record batch's header, the
# record's own fields, its key and headers. The replay's reader receives at most the limit
# and this.
_FRAMING = 64 * 1024
# How long the reader waits for one message: a broker that does not answer costs a letter
# this much, or what is left of the replay's time if that is less.
READ_SECONDS = 10.0
# How long one wait for a message lasts: a response refused as too large, or the deadline,
# ends the read within this.
_SLICE_SECONDS = 0.1
# How long the reader waits for a partition's watermarks after Kafka said its offset is out
# of range (the broker has just answered: this is for one that stops answering then).
_WATERMARK_SECONDS = 1.0
# What a reader's fetch that finds nothing costs the next letter's (``reader_settings``).
_FETCH_WAIT_MS = 100
# librdkafka's error (to ``error_cb``) for a response longer than it receives: it reads the
# length and refuses the response unread, then asks again, for ever.
_RESPONSE_TOO_LARGE = re.compile(r"Invalid response size (\d+)")


@dataclass(frozen=True)
class TooLarge:
    """A message larger than the replay reads (librdkafka refused its response unread)."""


@dataclass(frozen=True)
class OutOfTime:
    """The replay's deadline came before Kafka answered: nothing is known of the message."""


# Why Kafka no longer holds a message (``Gone.why``).
RETENTION = "retention"  # below its partition's first offset (the low watermark)
END = "end"  # at or past its partition's end (the high watermark)
OUT_OF_RANGE = "out-of-range"  # one of those two; the watermarks did not say which
COMPACTED = "compacted"  # the partition's next message comes after it
NO_TOPIC = "no-topic"  # the cluster has no such topic or partition


@dataclass(frozen=True)
class Gone:
    """Kafka answered, and the partition no longer holds the message: ``why`` is one of
    the kinds above, ``detail`` the offsets that say so."""

    why: str
    detail: str


@dataclass(frozen=True)
class NoAnswer:
    """Kafka did not answer in ``READ_SECONDS``, or could not be reached (``detail``:
    librdkafka's error, or the wait): nothing is known of the message."""

    detail: str


Read = bytes | Refusal | TooLarge | OutOfTime | Gone | NoAnswer
# A message's offset is out of its partition's range: what librdkafka reports with
# auto.offset.reset "error" (the broker's own code, on some versions, as it is).
_OUT_OF_RANGE = (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE)
_NO_TOPIC = (
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError._UNKNOWN_TOPIC,
    KafkaError._UNKNOWN_PARTITION,
)


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
        # The reader goes from letter to letter: what delays a fetch is made short. A
        # partition whose queue is full (one message passes 1 KiB) is fetched again after
        # fetch.queue.backoff.ms (librdkafka: 1000), and a new assignment may wait that long
        # (a race): eight letters on two partitions, one after the other, took 1-3 s on the
        # mock cluster, 0.1 s with 10 ms.
        "fetch.queue.backoff.ms": 10,
        # A fetch that finds nothing new (the letter's message was its partition's last) is
        # held by the broker this long (librdkafka: 500 ms), and the next letter's fetch to
        # that broker follows it.
        "fetch.wait.max.ms": _FETCH_WAIT_MS,
        # The letter's offset, or a report of why not: an offset out of the partition's
        # range is an error, not a reset to another message (the consumer's "earliest"),
        # and the partition's end is said (an empty partition was waited on for 10 s).
        "auto.offset.reset": "error",
        "enable.partition.eof": True,
        # A topic the cluster does not have is said at once, not after 30 s (librdkafka's
        # wait for a topic just created to reach every broker: the letter's is not new).
        "topic.metadata.propagation.max.ms": 0,
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


class MessageReader:
    """Reads one message after another at its offset (no group, no commit); ``close`` when
    done. Creating it contacts nobody: a replay whose letters are all kept whole opens no
    connection."""

    def __init__(self, config: kafka_config.KafkaConfig, limit: int) -> None:
        self._settings = reader_settings(config, limit)
        self._consumer: Consumer | None = None
        self._failures: list[KafkaError] = []

    def close(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            consumer.close()

    def _open(self) -> Consumer:
        if self._consumer is None:
            failures: list[KafkaError] = []
            self._failures = failures
            try:
                self._consumer = Consumer({**self._settings, "error_cb": failures.append})
            except KafkaException as error:
                message = kafka_config.refused_by_librdkafka(error)
                raise kafka_config.KafkaNotConfigured(message) from error
        return self._consumer

    def read(self, topic: str, partition: int, offset: int, deadline: float) -> Read:
        """The whole value of the message at ``offset``; librdkafka's refusal when it still
        cannot hand the message over (a batch it cannot inflate: it names the batch's first
        offset); ``TooLarge`` when its response is larger than the reader takes; ``Gone``
        when Kafka says the partition no longer holds it; ``NoAnswer`` when Kafka did not
        answer in ``READ_SECONDS`` or could not be reached; ``OutOfTime`` when ``deadline``
        (``time.monotonic()``) came first. ``KafkaNotConfigured`` when librdkafka refuses
        the settings."""
        consumer = self._open()
        self._failures.clear()
        clean = False
        try:
            consumer.assign([TopicPartition(topic, partition, offset)])
            own = time.monotonic() + READ_SECONDS
            until = min(own, deadline)
            while True:
                wait = max(0.0, min(_SLICE_SECONDS, until - time.monotonic()))
                for message in consumer.consume(num_messages=1, timeout=wait):
                    if (message.topic(), message.partition()) != (topic, partition):
                        continue  # left by another letter's assignment
                    failure, at = message.error(), message.offset()
                    if failure is None:
                        if at == offset:
                            clean = True
                            return bytes(message.value() or b"")
                        if at is not None and at > offset:
                            clean = True
                            return Gone(
                                COMPACTED,
                                f"the partition's next message after offset {offset} is "
                                f"at offset {at}",
                            )
                        continue
                    code = failure.code()
                    if code == KafkaError._PARTITION_EOF:
                        if at is not None and at < offset:
                            continue  # not this letter's (never seen)
                        clean = True
                        return Gone(END, f"offset {offset} is at or past the partition's end")
                    if code in _OUT_OF_RANGE:
                        clean = True
                        return _out_of_range(consumer, topic, partition, offset, until)
                    if code in _NO_TOPIC:
                        return Gone(NO_TOPIC, failure.str())
                    if at is not None and 0 <= at <= offset:
                        return kafka_refusal(failure)
                    return NoAnswer(failure.str())  # an error about the partition
                # Reported before the errors it causes (the broker's connection is closed).
                if any(_RESPONSE_TOO_LARGE.search(failure.str()) for failure in self._failures):
                    return TooLarge()
                for failure in self._failures:
                    if failure.code() in _NO_TOPIC:
                        return Gone(NO_TOPIC, failure.str())
                if self._failures:  # the broker could not be reached, or refused us
                    return NoAnswer(self._failures[-1].str())
                if time.monotonic() >= until:
                    clean = True  # a silent broker: a new reader would wait the same
                    if until < own:
                        return OutOfTime()
                    return NoAnswer(f"no answer in {READ_SECONDS:g} s")
        finally:
            if not clean:
                self.close()


def _out_of_range(
    consumer: Consumer, topic: str, partition: int, offset: int, until: float
) -> Gone:
    """Which side of its partition's range ``offset`` fell off: Kafka's answer to the fetch
    does not say, the partition's watermarks (one more request) do."""
    wait = min(_WATERMARK_SECONDS, max(_SLICE_SECONDS, until - time.monotonic()))
    try:
        found = consumer.get_watermark_offsets(
            TopicPartition(topic, partition), timeout=wait, cached=False
        )
    except KafkaException:
        found = None
    if found is None:  # no answer in time (older confluent-kafka return None for it)
        return Gone(OUT_OF_RANGE, f"offset {offset} is out of the partition's range")
    low, high = found
    if 0 <= offset < low:
        return Gone(RETENTION, f"offset {offset} is below the partition's first offset ({low})")
    if offset >= high >= 0:
        return Gone(END, f"offset {offset} is at or past the partition's end ({high})")
    return Gone(OUT_OF_RANGE, f"offset {offset} is out of the partition's range ({low}-{high})")

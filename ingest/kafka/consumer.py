"""The consume loop: gather a batch, store it, then commit its offsets.

Offsets are committed only after the statements that stored the batch have committed,
so a consumer killed at any point leaves its messages to be read again, and storage is
idempotent, so reading them again stores nothing twice (ADR 0062). A batch is bounded by
count, time and bytes (``LINEAGE_CONSUMER_BATCH_MESSAGES``, ``_BATCH_MS``, ``_BATCH_BYTES``);
the database stores
one batch (its INSERT sent in libpq's pipeline mode, ADR 0072) while the next is read and
checked, and at most one is in flight. A batch takes what librdkafka has already fetched
and waits for more only while the database is still storing the one before (ADR 0065).
Before partitions are taken away in a rebalance, what was read from them is stored and
committed. While PostgreSQL is away the partitions are paused and the batch retried.

No message stops its partition: one that cannot be read (a timestamp that is no date, a
batch librdkafka cannot inflate) is a dead letter like one that cannot be stored, and the
partition moves past it. No offset is committed past a message that was not stored: a
batch given up on (its write failed in a rebalance or at shutdown) holds its partitions'
commits back to its first message, and a partition the consumer keeps is read again from
there. Idle, with everything read stored, it commits up to librdkafka's position, past a
transaction's markers, which no message is handed over at.
"""

import logging
import threading
import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from django.db import DatabaseError, connections
from prometheus_client import Counter, Histogram

from ingest.kafka.config import KafkaConfig
from ingest.kafka.lag import LagReporter
from ingest.kafka.messages import Message, kafka_refusal, kept, unreadable
from ingest.kafka.storage import (
    BatchInFlight,
    BatchOutcome,
    PreparedBatch,
    finish_batch,
    prepare_batch,
    send_batch,
    write_batch,
)

logger = logging.getLogger(__name__)

MESSAGES = Counter(
    "lineage_kafka_messages_total",
    "Kafka messages stored by this consumer, by topic and outcome (created, duplicate, "
    "dead_letter); a message delivered again is a duplicate, whether it was an event or a "
    "dead letter.",
    ["topic", "outcome"],
)
BATCH_SECONDS = Histogram(
    "lineage_kafka_batch_store_seconds",
    "Time to store one batch of Kafka messages (from sending its INSERT to its commit).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
_RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
# While the database is storing the batch before, a batch that is not full waits for more
# messages in slices this long, so that it is handed over soon after the database is done.
_WAIT_SLICE = 0.01
# Messages taken from librdkafka at a time, at most: ``consume`` copies each into Python.
# Fewer near the batch's byte bound (``_wanted``), so a batch passes it by one message at
# most (a message is at most what librdkafka may inflate, ``receive.message.max.bytes``,
# and is kept only in part past ``LINEAGE_MAX_REQUEST_BYTES``).
_CHUNK = 16
# Errors librdkafka reports for one message (or one batch of them) it read from a partition
# and cannot hand over; it fetches the same offset again for ever unless the consumer moves
# past it. The message is a dead letter. Errors about the partition itself (authorisation,
# leadership, offsets) are not here: skipping on those would lose messages.
_UNREADABLE = {
    KafkaError._BAD_COMPRESSION,  # a batch that does not inflate, or inflates too large
    KafkaError._BAD_MSG,  # fails its checksum, or cannot be parsed
    KafkaError._NOT_IMPLEMENTED,  # an unknown compression codec or message format
    KafkaError.MSG_SIZE_TOO_LARGE,  # larger than librdkafka may receive
    KafkaError.INVALID_MSG,  # the broker says the record is corrupt
}


class IngestConsumer:
    """One member of the consumer group. ``run`` returns when ``stop`` is set."""

    def __init__(self, config: KafkaConfig, stop: threading.Event | None = None) -> None:
        self.config = config
        self.stop = stop or threading.Event()
        self.connected = False
        self.pending: list[Message] = []
        self.assigned: set[tuple[str, int]] = set()
        self.stored_messages = 0
        self.last_message_at = time.monotonic()
        self._retrying = False
        self.consumer = Consumer(
            {**config.consumer_settings(), "error_cb": self._on_error, "logger": logger}
        )
        self.lag = LagReporter(self.consumer, config)
        # The batch the database is storing while the next one is read and prepared: its
        # INSERT sent, not yet answered (ADR 0072), and when its steps began and took.
        self._in_flight: tuple[BatchInFlight, dict[str, float]] | None = None
        self._fill_seconds = 0.0  # the gathered batch's wait, from its first message
        self._pending_bytes = 0
        # A batch librdkafka could not hand over: (its first offset, the next to skip to).
        self._skipping: dict[tuple[str, int], tuple[int, int]] = {}
        # Partitions of a batch given up on, and its first offset on each: no commit goes
        # past it, and a partition still held is read again from there (``_rewind``).
        self._unstored: dict[tuple[str, int], int] = {}
        # Offsets stored whose commit the group refused (a rebalance in progress), on
        # partitions this member still holds: committed again until the group takes them,
        # since a cooperative rebalance leaves them here and nobody reads them again.
        self._uncommitted: dict[tuple[str, int], int] = {}
        self._committed_again_at = 0.0

    # --- the loop ---------------------------------------------------------------------------

    def subscribe(self) -> None:
        self.consumer.subscribe(
            list(self.config.topics),
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )

    def run(self, exit_when_idle: float | None = None) -> None:
        self.subscribe()
        try:
            while not self.stop.is_set():
                self._gather()
                self._rewind()
                if self.pending:
                    self._hand_over()
                else:
                    self._finish_in_flight()
                    self._commit_again()
                    self._commit_past_markers()
                self.lag.maybe_report(self.assigned)
                if exit_when_idle is not None and self._drained(exit_when_idle):
                    break
        finally:
            # Stopping (SIGTERM) does not wait for an absent database: what is not stored
            # now is read again by the partitions' next owner.
            self._finish_in_flight(retry=not self.stop.is_set())
            self._store_and_commit(retry=not self.stop.is_set())
            self.lag.maybe_report(self.assigned, force=True)
            self.consumer.close()  # leaves the group: its partitions move on at once

    def _drained(self, idle_seconds: float) -> bool:
        """Idle that long, and every assigned partition committed up to its end."""
        idle = time.monotonic() - self.last_message_at
        if idle < idle_seconds or not self.assigned or self.pending or self._in_flight:
            return False
        return self.lag.caught_up(self.assigned)

    def _hand_over(self) -> None:
        """Prepare the gathered batch (CPU) while the database stores the previous one,
        then finish and commit the previous one and send this one. At most one batch is in
        flight; its offsets are committed only once its write has committed."""
        batch, self.pending, self._pending_bytes = self.pending, [], 0
        started = time.monotonic()
        prepared = prepare_batch(batch, self.config.topics)
        timing = {"fill": self._fill_seconds, "prepare": time.monotonic() - started}
        self._finish_in_flight()
        timing["sent"] = time.monotonic()
        try:
            self._in_flight = (send_batch(prepared), timing)
        except DatabaseError as error:
            self._store_with_retry(prepared, error)

    def _finish_in_flight(self, retry: bool = True) -> None:
        """Wait for the batch in flight; commit it, or store it again here while the
        database is away (``retry``) or leave it to the partitions' next owner."""
        if self._in_flight is None:
            return
        in_flight, timing = self._in_flight
        self._in_flight = None
        started = time.monotonic()
        try:
            outcome = finish_batch(in_flight, self.config.topics, self.config.dead_letter_bytes)
        except DatabaseError as error:
            if retry:
                self._store_with_retry(in_flight.prepared, error)
            else:
                self._give_up(in_flight.prepared.messages, error)
            return
        finished = time.monotonic()
        BATCH_SECONDS.observe(finished - timing["sent"])
        self._count(in_flight.prepared.messages, outcome)
        self._commit(in_flight.prepared.messages)
        if logger.isEnabledFor(logging.DEBUG):
            # What a batch cost and where the loop waited (bench.kafka_accounting reads it).
            logger.debug(
                "kafka_batch messages=%d fill_ms=%.1f prepare_ms=%.1f write_ms=%.1f "
                "wait_ms=%.1f commit_ms=%.1f",
                len(in_flight.prepared.messages),
                timing["fill"] * 1000,
                timing["prepare"] * 1000,
                (finished - timing["sent"]) * 1000,
                (finished - started) * 1000,
                (time.monotonic() - finished) * 1000,
            )

    def _gather(self) -> None:
        """Read a batch: every message librdkafka has already fetched, at once, up to the
        count; more only while the previous batch is still being written, and not past
        ``batch_seconds`` after the first message. Waits at most a second for a first one,
        so that ``stop`` is seen, and not at all while a batch is in flight.

        ``consume(n, timeout)`` returns only once it has ``n`` messages or the timeout has
        passed. Asked for a whole batch, a consumer holding fewer messages than that (the
        tail of a burst; each of two consumers holding half of it) waited out the whole
        timeout, a second, with the database idle: two consumers stored fewer events/s than
        one (bench.kafka_accounting, ADR 0065). So it is asked for one message to wait for,
        and for the rest without waiting.
        """
        limit = self.config.batch_messages
        deadline = 0.0
        first_at = 0.0
        while (
            len(self.pending) < limit
            and self._pending_bytes < self.config.batch_bytes
            and not self.stop.is_set()
        ):
            wanted = self._wanted()
            if not self.pending:
                # A batch in flight is committed only when it is finished: with one, an idle
                # consumer goes back to the loop at once to finish it, not a second later.
                idle_wait = 1.0 if self._in_flight is None else 0.0
                found = self.consumer.consume(num_messages=1, timeout=idle_wait)
                if not found:
                    break  # idle: let the loop finish the batch, report lag, check ``stop``
            else:
                found = self.consumer.consume(num_messages=wanted, timeout=0)
                if not found:
                    wait = deadline - time.monotonic()
                    if wait <= 0 or not self._database_busy():
                        break  # nothing more fetched, and the database is free: hand it over
                    found = self.consumer.consume(
                        num_messages=wanted, timeout=min(wait, _WAIT_SLICE)
                    )
            self._take(found)
            if self.pending and not first_at:
                first_at = time.monotonic()
                deadline = first_at + self.config.batch_seconds
        self._fill_seconds = time.monotonic() - first_at if first_at else 0.0

    def _wanted(self) -> int:
        """How many messages to take next: a chunk, or as many as the byte bound still has
        room for at the batch's average size (at least one)."""
        wanted = min(self.config.batch_messages - len(self.pending), _CHUNK)
        if self.pending:
            room = self.config.batch_bytes - self._pending_bytes
            average = max(1, self._pending_bytes // len(self.pending))
            wanted = min(wanted, max(1, room // average))
        return wanted

    def _database_busy(self) -> bool:
        return self._in_flight is not None and not self._in_flight[0].answered()

    def _take(self, found: list[Any]) -> None:
        for message in found:
            taken = self._read(message)
            if taken is not None:
                self.pending.append(taken)
                self._pending_bytes += len(taken.value or b"") + len(taken.key or b"")

    def _read(self, message: Any) -> Message | None:
        """The message as the batch keeps it; None for an error that is no message."""
        error = message.error()
        if error is None:
            self.connected = True
            self._skipping.pop((message.topic(), message.partition()), None)
            return kept(
                message.topic(),
                message.partition(),
                message.offset(),
                message.key(),
                message.value(),
                message.timestamp(),
                self.config.dead_letter_bytes,
            )
        if (
            error.code() in _UNREADABLE
            and message.topic() in self.config.topics
            and message.partition() is not None
            and message.offset() is not None
            and message.offset() >= 0
        ):
            return self._skip_unreadable(message, error)
        if error.code() != KafkaError._PARTITION_EOF:
            logger.warning("kafka_consume_error error=%s", error)
        return None

    def _skip_unreadable(self, message: Any, error: KafkaError) -> Message:
        """A dead letter for the message librdkafka could not hand over, and the partition
        moved past it. librdkafka names the first offset of the batch that failed, and fetches
        the whole batch again for any offset inside it, so the same error comes back for the
        next offset while the batch lasts: each of its offsets becomes a dead letter in turn.
        """
        topic, partition, first = message.topic(), message.partition(), message.offset()
        skipping = self._skipping.get((topic, partition))
        offset = skipping[1] if skipping is not None and skipping[0] == first else first
        self._skipping[(topic, partition)] = (first, offset + 1)
        self.consumer.seek(TopicPartition(topic, partition, offset + 1))
        refusal = kafka_refusal(error)
        return unreadable(topic, partition, offset, refusal.code, refusal.reason)

    def _store_and_commit(self, retry: bool = True) -> None:
        """Store the pending batch and wait for it (nothing else in flight), then commit it."""
        if not self.pending:
            return
        batch, self.pending, self._pending_bytes = self.pending, [], 0
        prepared = prepare_batch(batch, self.config.topics)
        try:
            with BATCH_SECONDS.time():
                outcome = write_batch(prepared, self.config.topics, self.config.dead_letter_bytes)
        except DatabaseError as error:
            if retry:
                self._store_with_retry(prepared, error)
            else:
                connections.close_all()
                self._give_up(batch, error)
            return
        self._count(batch, outcome)
        self._commit(batch)

    def _store_with_retry(self, prepared: PreparedBatch, error: DatabaseError) -> None:
        """Retry the write while the database is away, partitions paused; then commit."""
        attempt = 0
        while True:
            self._wait_for_database(error, attempt)
            attempt += 1
            if self.stop.is_set():
                # Nothing acknowledged: read again by whoever owns them next; and nothing
                # after them either, whatever is stored before the consumer stops.
                self._give_up(prepared.messages, error)
                return
            try:
                with BATCH_SECONDS.time():
                    outcome = write_batch(
                        prepared, self.config.topics, self.config.dead_letter_bytes
                    )
                break
            except DatabaseError as again:
                error = again
        self._count(prepared.messages, outcome)
        self._commit(prepared.messages)
        self._retrying = False
        self.consumer.resume(self._assignment())

    def _wait_for_database(self, error: DatabaseError, attempt: int) -> None:
        if not self._retrying:
            # Paused, polling keeps the group membership alive (and serves rebalances)
            # without fetching more.
            self._retrying = True
            self.consumer.pause(self._assignment())
        connections.close_all()  # a broken connection is opened again by the next query
        delay = _RETRY_SECONDS[min(attempt, len(_RETRY_SECONDS) - 1)]
        logger.warning(
            "kafka_store_failed messages=%d error=%s retry_seconds=%s",
            len(self.pending),
            type(error).__name__,
            delay,
        )
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and not self.stop.is_set():
            # From a partition assigned meanwhile.
            self._take(self.consumer.consume(num_messages=self._wanted(), timeout=0.2))
            if (
                len(self.pending) >= self.config.batch_messages
                or self._pending_bytes >= self.config.batch_bytes
            ):
                self.consumer.pause(self._assignment())  # a batch in hand is enough

    def _give_up(self, batch: list[Message], error: DatabaseError) -> None:
        """The batch's write failed and is not retried (a rebalance, a stop): nothing of it
        is committed, and nothing after it on its partitions either, since committing a
        later batch would acknowledge these messages with it."""
        for message in batch:
            key = (message.topic, message.partition)
            self._unstored[key] = min(self._unstored.get(key, message.offset), message.offset)
        logger.warning(
            "kafka_store_failed messages=%d error=%s (read again from offsets %s)",
            len(batch),
            type(error).__name__,
            ",".join(f"{t}[{p}]@{o}" for (t, p), o in sorted(self._unstored.items())),
        )

    def _rewind(self) -> None:
        """Partitions still held after a batch was given up on are read again from its
        first message (what was read after it is dropped and read again too), so the
        consumer stores it and its commits move on; storage is idempotent."""
        if self._in_flight is not None:
            return
        held = {key: offset for key, offset in self._unstored.items() if key in self.assigned}
        for key, offset in held.items():
            del self._unstored[key]
            self._skipping.pop(key, None)
            self.consumer.seek(TopicPartition(key[0], key[1], offset))
        if not held:
            return
        self.pending = [
            m for m in self.pending if m.offset < held.get((m.topic, m.partition), m.offset + 1)
        ]
        self._pending_bytes = sum(len(m.value or b"") + len(m.key or b"") for m in self.pending)

    def _commit_again(self) -> None:
        """Commit the offsets the group refused, at most once a second while it refuses."""
        if self._uncommitted and time.monotonic() - self._committed_again_at >= 1.0:
            self._committed_again_at = time.monotonic()
            self._commit([])

    def _commit_past_markers(self) -> None:
        """Idle, with everything read stored: commit each partition up to librdkafka's
        position where it is past the last commit. A transaction's commit or abort marker,
        and an aborted transaction's messages, take offsets that are never handed over, so
        committing the last message's offset + 1 left the group behind the partition's end
        for good: a lag that never reached 0 and a drain (``--exit-when-idle``) that never
        ended. The position moves past them only once they are read, so nothing is
        acknowledged that was not stored or skipped on purpose."""
        if self.pending or self._in_flight or self._retrying or self._unstored:
            return
        ahead = {}
        for tp in self.consumer.position(self._assignment()):
            key = (tp.topic, tp.partition)
            known = self.lag.offsets.get(key)  # what the group holds, once reported
            if tp.error is None and known is not None and tp.offset > known:
                ahead[key] = tp.offset
        if ahead:
            # Committed like a refused commit: made again while the partition is held.
            self._uncommitted.update(ahead)
            self._commit([])

    def _commit(self, batch: list[Message]) -> None:
        offsets = dict(self._uncommitted)
        for message in batch:
            key = (message.topic, message.partition)
            offsets[key] = max(offsets.get(key, -1), message.offset + 1)
        for key, first_unstored in self._unstored.items():
            if key in offsets:
                offsets[key] = min(offsets[key], first_unstored)
        partitions = [
            TopicPartition(topic, partition, offset)
            for (topic, partition), offset in offsets.items()
            if (topic, partition) in self.assigned
        ]
        if not partitions:
            return
        try:
            self.consumer.commit(offsets=partitions, asynchronous=False)
        except KafkaException as error:
            # Stored all the same: committed again while this member holds the partitions
            # (``_commit_again``); whoever reads them again otherwise stores nothing twice.
            logger.warning("kafka_commit_failed error=%s", error)
            self._uncommitted.update(((tp.topic, tp.partition), tp.offset) for tp in partitions)
            return
        for tp in partitions:
            self._uncommitted.pop((tp.topic, tp.partition), None)
        self.lag.committed(offsets)

    def _count(self, batch: list[Message], outcome: BatchOutcome) -> None:
        """Count a stored batch by what its statements answered: a message delivered again
        (a restart before the commit, a rebalance) is a duplicate, and a dead letter is
        counted and logged once, when it is recorded."""
        self.stored_messages += len(batch)
        self.last_message_at = time.monotonic()
        for message, refusal in outcome.dead_letters:
            MESSAGES.labels(message.topic, "dead_letter").inc()
            logger.warning(
                "kafka_dead_letter topic=%s partition=%d offset=%d reason=%s",
                message.topic,
                message.partition,
                message.offset,
                refusal.code,
            )
        for topic, (created, duplicates) in outcome.by_topic.items():
            MESSAGES.labels(topic, "created").inc(created)
            MESSAGES.labels(topic, "duplicate").inc(duplicates)

    def _assignment(self) -> list[TopicPartition]:
        return [TopicPartition(topic, partition) for topic, partition in self.assigned]

    # --- group membership -----------------------------------------------------------------

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        self.connected = True
        self.last_message_at = time.monotonic()  # idleness counts from here
        self.assigned |= {(tp.topic, tp.partition) for tp in partitions}
        logger.info("kafka_assigned partitions=%s", _names(partitions))

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Before the partitions go: store and commit what was read from them."""
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        if not self._retrying:
            # Once, not retried: inside a rebalance callback the loop cannot wait.
            self._finish_in_flight(retry=False)
            self._store_and_commit(retry=False)
        # While the database is away, what was read from them is left to the next owner.
        self.pending = [m for m in self.pending if (m.topic, m.partition) not in revoked]
        self.assigned -= revoked
        self._forget(revoked)
        logger.info("kafka_revoked partitions=%s", _names(partitions))

    def _on_lost(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Lost without notice (the group moved on): nothing can be committed for them."""
        lost = {(tp.topic, tp.partition) for tp in partitions}
        self.pending = [m for m in self.pending if (m.topic, m.partition) not in lost]
        self.assigned -= lost
        self._forget(lost)
        logger.warning("kafka_partitions_lost partitions=%s", _names(partitions))

    def _forget(self, gone: set[tuple[str, int]]) -> None:
        """Partitions gone to another member: what was not committed is theirs to read."""
        self._pending_bytes = sum(len(m.value or b"") + len(m.key or b"") for m in self.pending)
        self.lag.forget(gone)
        for key in gone:
            self._unstored.pop(key, None)
            self._skipping.pop(key, None)
            self._uncommitted.pop(key, None)

    def _on_error(self, error: KafkaError) -> None:
        if error.code() in (KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT):
            self.connected = False
        logger.warning("kafka_error error=%s", error)


def _names(partitions: list[TopicPartition]) -> str:
    return ",".join(f"{tp.topic}[{tp.partition}]" for tp in partitions)

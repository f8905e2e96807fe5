"""The consume loop: gather a batch, store it, then commit its offsets.

Offsets are committed only after the statements that stored the batch have committed,
so a consumer killed at any point leaves its messages to be read again, and storage is
idempotent, so reading them again stores nothing twice (ADR 0062). A batch is bounded by
count and by time (``LINEAGE_CONSUMER_BATCH_MESSAGES``, ``_BATCH_MS``); the database stores
one batch (its INSERT sent in libpq's pipeline mode, ADR 0072) while the next is read and
checked, and at most one is in flight. A batch takes what librdkafka has already fetched
and waits for more only while the database is still storing the one before (ADR 0065).
Before partitions are taken away in a rebalance, what was read from them is stored and
committed. While PostgreSQL is away the partitions are paused and the batch retried.
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
from ingest.kafka.messages import Message, message_time
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
    "Kafka messages stored by this consumer, by topic and outcome "
    "(created, duplicate, dead_letter).",
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
                if self.pending:
                    self._hand_over()
                else:
                    self._finish_in_flight()
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
        batch, self.pending = self.pending, []
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
                logger.warning("kafka_store_failed error=%s", type(error).__name__)
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
        while len(self.pending) < limit and not self.stop.is_set():
            if not self.pending:
                # A batch in flight is committed only when it is finished: with one, an idle
                # consumer goes back to the loop at once to finish it, not a second later.
                idle_wait = 1.0 if self._in_flight is None else 0.0
                found = self.consumer.consume(num_messages=1, timeout=idle_wait)
                if not found:
                    break  # idle: let the loop finish the batch, report lag, check ``stop``
            else:
                found = self.consumer.consume(num_messages=limit - len(self.pending), timeout=0)
                if not found:
                    wait = deadline - time.monotonic()
                    if wait <= 0 or not self._database_busy():
                        break  # nothing more fetched, and the database is free: hand it over
                    found = self.consumer.consume(
                        num_messages=limit - len(self.pending), timeout=min(wait, _WAIT_SLICE)
                    )
            for message in found:
                if self._usable(message):
                    self.pending.append(_kept(message))
            if self.pending and not first_at:
                first_at = time.monotonic()
                deadline = first_at + self.config.batch_seconds
        self._fill_seconds = time.monotonic() - first_at if first_at else 0.0

    def _database_busy(self) -> bool:
        return self._in_flight is not None and not self._in_flight[0].answered()

    def _usable(self, message: Any) -> bool:
        error = message.error()
        if error is None:
            self.connected = True
            return True
        if error.code() != KafkaError._PARTITION_EOF:
            logger.warning("kafka_consume_error error=%s", error)
        return False

    def _store_and_commit(self, retry: bool = True) -> None:
        """Store the pending batch and wait for it (nothing else in flight), then commit it."""
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        prepared = prepare_batch(batch, self.config.topics)
        try:
            with BATCH_SECONDS.time():
                outcome = write_batch(prepared, self.config.topics, self.config.dead_letter_bytes)
        except DatabaseError as error:
            if retry:
                self._store_with_retry(prepared, error)
            else:
                connections.close_all()
                logger.warning("kafka_store_failed error=%s", type(error).__name__)
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
                return  # nothing acknowledged: read again by whoever owns them next
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
            for message in self.consumer.consume(num_messages=100, timeout=0.2):
                if self._usable(message):  # from a partition assigned meanwhile
                    self.pending.append(_kept(message))
            if len(self.pending) >= self.config.batch_messages:
                self.consumer.pause(self._assignment())  # a batch in hand is enough

    def _commit(self, batch: list[Message]) -> None:
        offsets: dict[tuple[str, int], int] = {}
        for message in batch:
            key = (message.topic, message.partition)
            offsets[key] = max(offsets.get(key, -1), message.offset + 1)
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
            # Stored all the same; whoever reads these messages again stores nothing twice.
            logger.warning("kafka_commit_failed error=%s", error)
            return
        self.lag.committed(offsets)

    def _count(self, batch: list[Message], outcome: BatchOutcome) -> None:
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
        if batch:
            topic = batch[0].topic if len({m.topic for m in batch}) == 1 else "(several)"
            MESSAGES.labels(topic, "created").inc(outcome.created)
            MESSAGES.labels(topic, "duplicate").inc(outcome.duplicates)

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
        self.lag.forget(revoked)
        logger.info("kafka_revoked partitions=%s", _names(partitions))

    def _on_lost(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Lost without notice (the group moved on): nothing can be committed for them."""
        lost = {(tp.topic, tp.partition) for tp in partitions}
        self.pending = [m for m in self.pending if (m.topic, m.partition) not in lost]
        self.assigned -= lost
        self.lag.forget(lost)
        logger.warning("kafka_partitions_lost partitions=%s", _names(partitions))

    def _on_error(self, error: KafkaError) -> None:
        if error.code() in (KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT):
            self.connected = False
        logger.warning("kafka_error error=%s", error)


def _kept(message: Any) -> Message:
    return Message(
        topic=message.topic(),
        partition=message.partition(),
        offset=message.offset(),
        key=message.key(),
        value=message.value(),
        timestamp=message_time(message.timestamp()),
    )


def _names(partitions: list[TopicPartition]) -> str:
    return ",".join(f"{tp.topic}[{tp.partition}]" for tp in partitions)

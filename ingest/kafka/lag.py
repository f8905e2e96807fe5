"""Consumer lag: each consumer writes its partitions' committed offset and high watermark
into ``ingest_consumer_lag`` every few seconds; ``/metrics`` of every web pod and the admin
dashboard read that table, so all of them show the same figures."""

import logging
import os
import socket
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaException, TopicPartition
from django.db import connection
from django.utils import timezone

from ingest.kafka.config import KafkaConfig

logger = logging.getLogger(__name__)

_UPSERT = """
INSERT INTO ingest_consumer_lag
    (group_id, topic, partition, committed_offset, high_watermark, member, reported_at)
SELECT %s, t, p, c, h, %s, %s FROM unnest(%s::text[], %s::int[], %s::bigint[], %s::bigint[])
    AS u(t, p, c, h)
ON CONFLICT (group_id, topic, partition) DO UPDATE SET
    committed_offset = EXCLUDED.committed_offset, high_watermark = EXCLUDED.high_watermark,
    member = EXCLUDED.member, reported_at = EXCLUDED.reported_at
"""


class LagReporter:
    def __init__(self, consumer: Any, config: KafkaConfig) -> None:
        self.consumer = consumer
        self.config = config
        self.member = f"{socket.gethostname()}:{os.getpid()}"
        self.offsets: dict[tuple[str, int], int] = {}  # committed by this consumer
        self.last_report = 0.0

    def committed(self, offsets: dict[tuple[str, int], int]) -> None:
        self.offsets.update(offsets)

    def forget(self, partitions: Iterable[tuple[str, int]]) -> None:
        for partition in partitions:
            self.offsets.pop(partition, None)

    def maybe_report(self, assigned: set[tuple[str, int]], force: bool = False) -> None:
        now = time.monotonic()
        if not assigned or (not force and now - self.last_report < self.config.lag_report_seconds):
            return
        self.last_report = now
        try:
            rows = [self._row(topic, partition) for topic, partition in sorted(assigned)]
            rows = [row for row in rows if row is not None]
            if not rows:
                return
            columns = [list(column) for column in zip(*rows, strict=True)]
            with connection.cursor() as cursor:
                cursor.execute(
                    _UPSERT, [self.config.group_id, self.member, timezone.now(), *columns]
                )
        except Exception as error:  # lag is a report: never stop the loop
            logger.warning("kafka_lag_report_failed error=%s", type(error).__name__)

    def caught_up(self, assigned: set[tuple[str, int]]) -> bool:
        """Whether this consumer has committed every assigned partition up to its end; not
        while a broker does not answer in time (a busy broker stopped a drain with a
        KafkaException)."""
        try:
            for topic, partition in assigned:
                _, high = self.consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=2
                )
                row = self._row(topic, partition)
                if row is None or row[2] < high:
                    return False
        except KafkaException as error:
            logger.warning("kafka_watermarks_unavailable error=%s", error)
            return False
        return True

    def _row(self, topic: str, partition: int) -> tuple[str, int, int, int] | None:
        part = TopicPartition(topic, partition)
        low, high = self.consumer.get_watermark_offsets(part, cached=True)
        if high is None or high < 0 or low is None or low < 0:
            low, high = self.consumer.get_watermark_offsets(part, timeout=2)
        committed = self.offsets.get((topic, partition))
        if committed is None:
            found = self.consumer.committed([part], timeout=2)[0].offset
            committed = found if found >= 0 else self._start(low, high)
            self.offsets[(topic, partition)] = committed
        return (topic, partition, committed, high)

    def _start(self, low: int, high: int) -> int:
        """Where a group with no commit on the partition starts reading (auto.offset.reset):
        counting from offset 0 reported messages it will never read (those the topic's
        retention deleted; all of them with ``latest``) as lag for good, since nothing is
        committed until a message arrives, and kept a drain from ever ending."""
        reset = str(self.config.consumer_settings()["auto.offset.reset"]).lower()
        return high if reset in ("latest", "largest", "end") else max(low, 0)

"""Kafka ingest figures read from the database at scrape time, for every web pod's
``/metrics`` and the admin dashboard: lag per partition (ingest_consumer_lag, one row per
partition, as reported by its consumer) and dead letters not yet replayed (capped)."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, connection
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

DEAD_LETTER_CAP = 10_000
MAX_PARTITIONS = 1_000  # rows of lag read at most (a partition is one row)


@dataclass(frozen=True)
class PartitionLag:
    group_id: str
    topic: str
    partition: int
    committed_offset: int
    high_watermark: int
    member: str
    reported_at: datetime

    @property
    def lag(self) -> int:
        return max(0, self.high_watermark - self.committed_offset)


def partition_lag() -> list[PartitionLag]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT group_id, topic, partition, committed_offset, high_watermark, member, "
            "reported_at FROM ingest_consumer_lag ORDER BY group_id, topic, partition LIMIT %s",
            [MAX_PARTITIONS],
        )
        return [PartitionLag(*row) for row in cursor.fetchall()]


def open_dead_letters() -> list[tuple[str, str, int]]:
    """(topic, reason code, count) of dead letters not replayed, the newest ``DEAD_LETTER_CAP``
    of them (ingest_dead_letter_open_idx)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT topic, reason_code, count(*) FROM (SELECT topic, reason_code "
            "FROM ingest_dead_letter WHERE replayed_at IS NULL ORDER BY id DESC LIMIT %s) open "
            "GROUP BY 1, 2 ORDER BY 1, 2",
            [DEAD_LETTER_CAP],
        )
        return [(topic, code, int(count)) for topic, code, count in cursor.fetchall()]


class KafkaCollector(Collector):
    def collect(self) -> Iterable[GaugeMetricFamily]:
        try:
            lags = partition_lag()
            letters = open_dead_letters()
        except DatabaseError:
            return  # lineage_metrics_database_up says so already
        lag = GaugeMetricFamily(
            "lineage_kafka_consumer_lag_messages",
            "Messages of a partition not yet committed by the consumer group.",
            labels=["group", "topic", "partition"],
        )
        age = GaugeMetricFamily(
            "lineage_kafka_consumer_report_age_seconds",
            "Seconds since the partition's consumer last reported (a stopped consumer's grows).",
            labels=["group", "topic", "partition"],
        )
        now = timezone.now()
        for row in lags:
            labels = [row.group_id, row.topic, str(row.partition)]
            lag.add_metric(labels, row.lag)
            age.add_metric(labels, max(0.0, (now - row.reported_at).total_seconds()))
        yield lag
        yield age
        dead = GaugeMetricFamily(
            "lineage_kafka_dead_letters",
            f"Kafka messages kept as dead letters and not replayed (capped at {DEAD_LETTER_CAP}).",
            labels=["topic", "reason"],
        )
        for topic, code, count in letters:
            dead.add_metric([topic, code], count)
        yield dead

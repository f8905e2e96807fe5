"""The consumer's configuration, from ``settings.LINEAGE_KAFKA`` (LINEAGE_KAFKA_*)."""

import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

OPENLINEAGE = "openlineage"
METADATA = "metadata"
KINDS = (OPENLINEAGE, METADATA)
RECEIVE_BYTES = "receive.message.max.bytes"
MOCK = "mock"  # LINEAGE_KAFKA_BOOTSTRAP_SERVERS=mock: make run starts a mock cluster
# Decided by the consumer, whatever the environment says: offsets are committed by the
# consumer itself, and only after the batch they cover is stored (ADR 0062).
_FORCED = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
}
_DEFAULTS = {
    # A new group starts at the oldest message kept: nothing produced before the consumer
    # first ran is skipped.
    "auto.offset.reset": "earliest",
    # Rebalances move partitions one by one instead of stopping the whole group.
    "partition.assignment.strategy": "cooperative-sticky",
    # What librdkafka holds is bounded here, not by what producers send (docs/ingest.md,
    # "Memory"); librdkafka's own defaults let one consumer hold over a gigabyte of
    # inflated messages, and the chart gives it 512 MiB.
    # The bytes of one fetch on the wire, and of one partition's share of it.
    "fetch.max.bytes": 1024 * 1024,
    "max.partition.fetch.bytes": 1024 * 1024,
    # Fetched messages waiting to be read, counted inflated (librdkafka: 64 MiB); stops
    # fetching when passed, overshot by at most one fetch.
    "queued.max.messages.kbytes": 16 * 1024,
    # The largest response librdkafka reads, and the most a zstd batch may inflate to
    # (librdkafka: 100 MB); a batch that inflates beyond it is a dead letter. It must
    # exceed the topics' ``max.message.bytes`` (1 MiB by default), else a batch that large
    # can never be fetched.
    RECEIVE_BYTES: 4 * 1024 * 1024,
}


_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's own rule for a topic name


class KafkaNotConfigured(Exception):
    """Kafka ingest is off or its settings are wrong; the message says which and how."""


@dataclass(frozen=True)
class KafkaConfig:
    bootstrap_servers: str
    topics: dict[str, str]  # topic → kind
    group_id: str
    client: dict[str, str] = field(default_factory=dict)  # further librdkafka settings
    batch_messages: int = 500
    batch_seconds: float = 0.2
    batch_bytes: int = 16 * 1024 * 1024  # a gathered batch's values and keys
    dead_letter_bytes: int = 64 * 1024
    port: int = 0
    host: str = "127.0.0.1"
    lag_report_seconds: float = 5.0

    def consumer_settings(self) -> dict[str, Any]:
        """What ``confluent_kafka.Consumer`` is given."""
        settings: dict[str, Any] = {
            **_DEFAULTS,
            **self.client,
            "bootstrap.servers": self.bootstrap_servers,
            "group.id": self.group_id,
            **_FORCED,
        }
        # librdkafka refuses a response limit below a fetch plus its framing, and a fetch
        # below ``message.max.bytes``: an operator who changed only
        # LINEAGE_KAFKA_FETCH_MAX_BYTES gets what that needs.
        fetch = int(settings["fetch.max.bytes"])
        if RECEIVE_BYTES not in self.client:
            settings[RECEIVE_BYTES] = max(int(settings[RECEIVE_BYTES]), fetch + 512)
        if "message.max.bytes" not in self.client:
            settings["message.max.bytes"] = min(1_000_000, fetch)  # librdkafka's default
        return settings


def parse_topics(items: list[str]) -> dict[str, str]:
    topics: dict[str, str] = {}
    for item in items:
        topic, _, kind = item.partition(":")
        topic, kind = topic.strip(), (kind.strip() or OPENLINEAGE).lower()
        if not topic:
            raise KafkaNotConfigured(f"LINEAGE_KAFKA_TOPICS: {item!r} names no topic.")
        if not _TOPIC_NAME.fullmatch(topic):
            # librdkafka reads a name starting with ^ as a pattern and subscribes to every
            # topic it matches, whose messages have no kind here: the loop failed on the first.
            raise KafkaNotConfigured(
                f"LINEAGE_KAFKA_TOPICS: {topic!r} is not a topic name (letters, digits, '.', "
                "'_' and '-', at most 249; no patterns): name each topic."
            )
        if kind not in KINDS:
            raise KafkaNotConfigured(
                f"LINEAGE_KAFKA_TOPICS: {item!r}: the kind must be one of {', '.join(KINDS)}."
            )
        if topics.get(topic, kind) != kind:
            raise KafkaNotConfigured(f"LINEAGE_KAFKA_TOPICS: {topic!r} is given two kinds.")
        topics[topic] = kind
    return topics


def client_settings(variables: dict[str, str]) -> dict[str, str]:
    """LINEAGE_KAFKA_SASL_MECHANISM=PLAIN → {"sasl.mechanism": "PLAIN"}."""
    return {name.lower().replace("_", "."): value for name, value in variables.items()}


def refused_by_librdkafka(error: Exception) -> str:
    """One line for settings librdkafka refuses when the consumer is created (an unknown
    property, a value it does not take, two that do not fit together), naming the
    variables that set them: librdkafka names only its own properties."""
    text = str(error.args[0].str() if error.args and hasattr(error.args[0], "str") else error)
    names = dict.fromkeys(re.findall(r"[\"`]([a-z][a-z0-9]*(?:\.[a-z0-9]+)+)[\"`]", text))
    variables = ", ".join(f"LINEAGE_KAFKA_{name.upper().replace('.', '_')}" for name in names)
    return (
        f"librdkafka refuses the Kafka settings: {text}"
        + (f" (set by {variables} or this consumer's defaults)" if variables else "")
        + ". See docs/ingest.md."
    )


def _integer_setting(client: dict[str, str], name: str) -> None:
    """A setting the consumer computes with must be a whole number of bytes."""
    if name in client and not client[name].strip().isdigit():
        variable = "LINEAGE_KAFKA_" + name.upper().replace(".", "_")
        raise KafkaNotConfigured(
            f"{variable}={client[name]!r}: {name} is a number of bytes (e.g. 1048576)."
        )


def load(overrides: dict[str, Any] | None = None) -> KafkaConfig:
    """The configuration, or ``KafkaNotConfigured`` saying what is missing."""
    values = {**settings.LINEAGE_KAFKA, **(overrides or {})}
    servers = values["BOOTSTRAP_SERVERS"].strip()
    if not servers:
        raise KafkaNotConfigured(
            "Kafka ingest is not configured: set LINEAGE_KAFKA_BOOTSTRAP_SERVERS (host:port,...) "
            "and LINEAGE_KAFKA_TOPICS (topic:openlineage,topic:metadata). See docs/ingest.md."
        )
    if servers == MOCK:
        raise KafkaNotConfigured(
            "LINEAGE_KAFKA_BOOTSTRAP_SERVERS=mock is for `make run` only, which starts the mock "
            "cluster and gives the consumer its address; point it at a real cluster here."
        )
    topics = parse_topics(values["TOPICS"])
    if not topics:
        raise KafkaNotConfigured(
            "LINEAGE_KAFKA_TOPICS is empty: name the topics to read, e.g. "
            "LINEAGE_KAFKA_TOPICS=openlineage,metadata-records:metadata."
        )
    if values["BATCH_MESSAGES"] < 1 or values["BATCH_MS"] < 1 or values["BATCH_BYTES"] < 1:
        raise KafkaNotConfigured(
            "LINEAGE_CONSUMER_BATCH_MESSAGES, LINEAGE_CONSUMER_BATCH_MS and "
            "LINEAGE_CONSUMER_BATCH_BYTES must be positive."
        )
    if not 0 <= values["PORT"] <= 65535:
        raise KafkaNotConfigured(
            f"LINEAGE_CONSUMER_PORT={values['PORT']}: a port is 0-65535 (0: no probe server)."
        )
    client = client_settings(values["CLIENT"])
    _integer_setting(client, "fetch.max.bytes")
    return KafkaConfig(
        bootstrap_servers=servers,
        topics=topics,
        group_id=values["GROUP_ID"].strip() or "lineage-catalog",
        client=client,
        batch_messages=values["BATCH_MESSAGES"],
        batch_seconds=values["BATCH_MS"] / 1000,
        batch_bytes=values["BATCH_BYTES"],
        dead_letter_bytes=max(256, values["DEAD_LETTER_BYTES"]),
        port=values["PORT"],
        host=values["HOST"].strip() or "127.0.0.1",
        lag_report_seconds=max(0.5, values["LAG_REPORT_SECONDS"]),
    )

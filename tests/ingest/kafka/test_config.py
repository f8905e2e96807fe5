"""LINEAGE_KAFKA_* as operators write them: topics with kinds, librdkafka pass-through
settings (and their _FILE variants), and a clear exit when Kafka is not configured."""

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from config.env import env_prefixed
from ingest.kafka import config as kafka_config


def test_topics_with_kinds_and_a_bare_topic_means_openlineage() -> None:
    topics = kafka_config.parse_topics(["ol", "records:metadata", "spark:OpenLineage"])
    assert topics == {"ol": "openlineage", "records": "metadata", "spark": "openlineage"}


@pytest.mark.parametrize("item", ["ol:avro", ":metadata", "^lineage-.*", "ol events"])
def test_a_wrong_topic_is_named(item: str) -> None:
    with pytest.raises(kafka_config.KafkaNotConfigured, match="LINEAGE_KAFKA_TOPICS"):
        kafka_config.parse_topics([item])


def test_other_settings_pass_through_to_librdkafka_with_file_variants(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cret\n")
    monkeypatch.setenv("LINEAGE_KAFKA_BOOTSTRAP_SERVERS", "broker:9092")
    monkeypatch.setenv("LINEAGE_KAFKA_SASL_MECHANISM", "PLAIN")
    monkeypatch.setenv("LINEAGE_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("LINEAGE_KAFKA_SASL_PASSWORD_FILE", str(secret))
    variables = env_prefixed("LINEAGE_KAFKA_", {"BOOTSTRAP_SERVERS", "TOPICS", "GROUP_ID"})
    assert variables == {
        "SASL_MECHANISM": "PLAIN",
        "SASL_PASSWORD": "s3cret",
        "SECURITY_PROTOCOL": "SASL_SSL",
    }
    config = kafka_config.load(
        {"BOOTSTRAP_SERVERS": "broker:9092", "TOPICS": ["ol"], "CLIENT": variables}
    )
    client = config.consumer_settings()
    assert client["sasl.mechanism"] == "PLAIN" and client["sasl.password"] == "s3cret"
    assert client["group.id"] == "lineage-catalog"
    # Whatever the environment says, offsets are the consumer's to commit.
    monkeypatch.setenv("LINEAGE_KAFKA_ENABLE_AUTO_COMMIT", "true")
    forced = kafka_config.load(
        {
            "BOOTSTRAP_SERVERS": "b:9092",
            "TOPICS": ["ol"],
            "CLIENT": env_prefixed("LINEAGE_KAFKA_", {"BOOTSTRAP_SERVERS"}),
        }
    )
    assert forced.consumer_settings()["enable.auto.commit"] is False


def test_consume_kafka_exits_with_a_clear_message_when_not_configured(settings: Any) -> None:
    settings.LINEAGE_KAFKA = {**settings.LINEAGE_KAFKA, "BOOTSTRAP_SERVERS": ""}
    with pytest.raises(CommandError, match="LINEAGE_KAFKA_BOOTSTRAP_SERVERS") as refused:
        call_command("consume_kafka")
    assert refused.value.returncode == 78


def test_mock_is_refused_outside_make_run() -> None:
    with pytest.raises(kafka_config.KafkaNotConfigured, match="make run"):
        kafka_config.load({"BOOTSTRAP_SERVERS": "mock", "TOPICS": ["ol"]})


def test_no_topics_is_refused() -> None:
    with pytest.raises(kafka_config.KafkaNotConfigured, match="LINEAGE_KAFKA_TOPICS is empty"):
        kafka_config.load({"BOOTSTRAP_SERVERS": "b:9092", "TOPICS": []})


@pytest.mark.parametrize("seconds", ["nan", "0", "-1", "inf"])
def test_an_idle_time_that_can_never_or_always_pass_is_refused(seconds: str) -> None:
    """--exit-when-idle nan consumed for ever (nothing compares as longer than nan)."""
    with pytest.raises(CommandError, match="--exit-when-idle must be a number of seconds"):
        call_command("consume_kafka", "--exit-when-idle", seconds)


def test_a_setting_librdkafka_refuses_is_one_line_and_exit_status_78(settings: Any) -> None:
    """A LINEAGE_KAFKA_<SETTING> librdkafka cannot take was a KafkaException traceback."""
    settings.LINEAGE_KAFKA = {
        **settings.LINEAGE_KAFKA,
        "BOOTSTRAP_SERVERS": "127.0.0.1:1",
        "TOPICS": ["ol"],
        "CLIENT": {"SESSION_TIMEOUT_MS": "soon"},
    }
    with pytest.raises(CommandError, match=r"session\.timeout\.ms") as refused:
        call_command("consume_kafka", "--exit-when-idle", "1")
    assert refused.value.returncode == 78


@pytest.mark.parametrize(
    ("client", "lineage", "named"),
    [
        ({"SASL_PASWORD": "x"}, {}, "LINEAGE_KAFKA_SASL_PASWORD"),  # misspelt
        ({"AUTO_OFFSET_RESET": "oldest"}, {}, "LINEAGE_KAFKA_AUTO_OFFSET_RESET"),
        ({"RECEIVE_MESSAGE_MAX_BYTES": "1000"}, {}, "LINEAGE_KAFKA_RECEIVE_MESSAGE_MAX_BYTES"),
        ({"FETCH_MAX_BYTES": "1MiB"}, {}, "LINEAGE_KAFKA_FETCH_MAX_BYTES"),
        ({}, {"PORT": 70000}, "LINEAGE_CONSUMER_PORT"),
    ],
)
def test_a_value_the_consumer_cannot_take_ends_it_in_one_line_naming_the_variable(
    settings: Any, client: dict[str, str], lineage: dict[str, Any], named: str
) -> None:
    """These ended the command in a traceback (KafkaException from librdkafka, ValueError,
    OverflowError from bind) that named librdkafka's property, not the variable to fix."""
    settings.LINEAGE_KAFKA = {
        **settings.LINEAGE_KAFKA,
        "BOOTSTRAP_SERVERS": "127.0.0.1:1",  # never reached: refused before connecting
        "TOPICS": ["ol"],
        "CLIENT": client,
        **lineage,
    }
    with pytest.raises(CommandError, match=named) as refused:
        call_command("consume_kafka")
    assert refused.value.returncode == 78  # EX_CONFIG: make run does not start it again
    assert "\n" not in str(refused.value)


def test_the_documented_defaults_each_changed_by_its_variable_and_the_forced_ones_not() -> None:
    """docs/ingest.md's tables ("Memory" and the paragraph before it), as librdkafka is
    given them, and accepted by it together."""
    from confluent_kafka import Consumer

    def given(**client: str) -> dict[str, Any]:
        config = kafka_config.load(
            {"BOOTSTRAP_SERVERS": "127.0.0.1:1", "TOPICS": ["ol"], "CLIENT": client}
        )
        settings = config.consumer_settings()
        Consumer(settings).close()  # librdkafka takes them as a whole
        return settings

    mib = 1024 * 1024
    defaults = given()
    assert {name: defaults[name] for name in defaults if name not in ("bootstrap.servers",)} == {
        "group.id": "lineage-catalog",
        "auto.offset.reset": "earliest",
        "partition.assignment.strategy": "cooperative-sticky",
        "fetch.max.bytes": mib,
        "max.partition.fetch.bytes": mib,
        "queued.max.messages.kbytes": 16 * 1024,
        "receive.message.max.bytes": 4 * mib,
        "message.max.bytes": 1_000_000,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
    }
    changed = given(
        QUEUED_MAX_MESSAGES_KBYTES="4096",
        AUTO_OFFSET_RESET="latest",
        ENABLE_AUTO_OFFSET_STORE="true",
        ENABLE_AUTO_COMMIT="true",
    )
    assert changed["queued.max.messages.kbytes"] == "4096"
    assert changed["auto.offset.reset"] == "latest"
    assert changed["enable.auto.commit"] is False and changed["enable.auto.offset.store"] is False
    # receive.message.max.bytes is at least fetch.max.bytes + 512, message.max.bytes at
    # most fetch.max.bytes, when only LINEAGE_KAFKA_FETCH_MAX_BYTES is given.
    large = given(FETCH_MAX_BYTES=str(8 * mib))
    assert large["receive.message.max.bytes"] == 8 * mib + 512
    assert large["message.max.bytes"] == 1_000_000
    small = given(FETCH_MAX_BYTES="65536")
    assert small["receive.message.max.bytes"] == 4 * mib
    assert small["message.max.bytes"] == 65536

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


@pytest.mark.parametrize("item", ["ol:avro", ":metadata"])
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
    with pytest.raises(CommandError, match="LINEAGE_KAFKA_BOOTSTRAP_SERVERS"):
        call_command("consume_kafka")


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

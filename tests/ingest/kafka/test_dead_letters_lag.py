"""Dead letters are visible and replayable in the admin, and counted in /metrics; lag per
partition is in /metrics and on the admin dashboard; the consumer's /readyz."""

import json
import re
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client

from catalog.admin.dashboard import CACHE_KEY, build_dashboard
from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.health import READINESS_SECONDS, serve
from ingest.kafka.mock import create_topics
from ingest.models import DeadLetter, Event
from tests.ingest.kafka.cluster import mock_cluster, produce
from tests.ingest.kafka.test_consume import consume, ol_event_dict

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def superuser_client() -> Client:
    user = User.objects.create_superuser("kafka-admin", "k@example.com", "pw-kafka-admin")
    client = Client()
    client.force_login(user)
    return client


def metric(client: Client, name: str, **labels: str) -> float | None:
    text = client.get("/metrics").content.decode()
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        found = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if found and ",".join(sorted(found.group(1).split(","))) == wanted:
            return float(found.group(2))
    return None


def test_dead_letters_are_counted_shown_redacted_and_replayed_after_a_fix(
    bootstrap: str, settings: Any, superuser_client: Client
) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "MAX_JSON_DEPTH": 8}
    deep: Any = {"password": "hunter2"}
    for _ in range(10):
        deep = {"facet": deep}
    event = {**ol_event_dict(1), "job": {"namespace": "replay", "name": "j", "facets": deep}}
    produce(bootstrap, "lineage-2", [event], key=b"api_key=hunter3")
    consume(bootstrap, "lineage-2")
    letter = DeadLetter.objects.get(reason_code="too-deep")
    assert bytes(letter.key) == b"api_key=hunter3"  # kept as sent, shown redacted
    assert (
        metric(superuser_client, "lineage_kafka_dead_letters", topic="lineage-2", reason="too-deep")
        == 1
    )
    page = superuser_client.get(f"/admin/ingest/deadletter/{letter.id}/change/").content.decode()
    assert "lineage-2" in page and "REDACTED" in page
    assert "hunter2" not in page and "hunter3" not in page
    # The steward (or operator) raises the limit, then replays from the admin.
    settings.LINEAGE = {**settings.LINEAGE, "MAX_JSON_DEPTH": 64}
    answer = superuser_client.post(
        "/admin/ingest/deadletter/",
        {"action": "replay_selected", "_selected_action": [letter.id]},
        follow=True,
    )
    assert "Stored 1" in answer.content.decode()
    letter.refresh_from_db()
    assert letter.replayed_at is not None
    assert Event.objects.get(id=letter.replayed_event_id).job_namespace == "replay"
    assert (
        metric(superuser_client, "lineage_kafka_dead_letters", topic="lineage-2", reason="too-deep")
        is None
    )


def test_a_dead_letter_kept_in_part_is_replayed_from_kafka(
    bootstrap: str, settings: Any, superuser_client: Client
) -> None:
    from ingest.kafka.replay import replay

    settings.LINEAGE = {**settings.LINEAGE, "MAX_REQUEST_BYTES": 2048}
    big = {**ol_event_dict(2), "job": {"namespace": "big", "name": "x" * 4000}}
    produce(bootstrap, "lineage-2", [big])
    consume(bootstrap, "lineage-2", DEAD_LETTER_BYTES=256)
    letter = DeadLetter.objects.get(reason_code="payload-too-large")
    assert not letter.complete and len(bytes(letter.value)) == 256
    settings.LINEAGE = {**settings.LINEAGE, "MAX_REQUEST_BYTES": 1 << 20}
    report = replay([letter.id])  # Kafka not configured in this process: it says so
    assert report.unavailable == [letter.id]
    assert "cannot read Kafka" in report.why_unavailable()
    assert "LINEAGE_KAFKA_BOOTSTRAP_SERVERS" in report.why_unavailable()
    # A web process given `mock` (make run gives every process the cluster's address
    # instead): the admin's message says why, not that the message is gone.
    settings.LINEAGE_KAFKA = {**settings.LINEAGE_KAFKA, "BOOTSTRAP_SERVERS": "mock"}
    answer = superuser_client.post(
        "/admin/ingest/deadletter/",
        {"action": "replay_selected", "_selected_action": [letter.id]},
        follow=True,
    ).content.decode()
    assert "unavailable 1 (only a prefix was kept, and this process cannot read Kafka" in answer
    assert "is for `make run` only" in answer and "no longer holds" not in answer
    # A setting librdkafka refuses (it raised out of the admin's action): said the same way.
    # (Not auto.offset.reset: the reader sets its own, ADR 0169.)
    settings.LINEAGE_KAFKA = {
        **settings.LINEAGE_KAFKA,
        "BOOTSTRAP_SERVERS": bootstrap,
        "TOPICS": ["lineage-2"],
        "CLIENT": {"ISOLATION_LEVEL": "read_dirty"},
    }
    refused = replay([letter.id])
    assert refused.unavailable == [letter.id]
    assert "LINEAGE_KAFKA_ISOLATION_LEVEL" in refused.why_unavailable()
    settings.LINEAGE_KAFKA = {**settings.LINEAGE_KAFKA, "CLIENT": {}}
    assert replay([letter.id]).stored == [letter.id]
    assert Event.objects.filter(job_namespace="big").count() == 1


def test_lag_per_partition_in_metrics_and_on_the_dashboard(
    bootstrap: str, superuser_client: Client
) -> None:
    produce(bootstrap, "lineage", [ol_event_dict(n) for n in range(6)])
    group = f"lag-{uuid.uuid4().hex[:8]}"
    consume(bootstrap, "lineage", group)
    for partition in range(4):
        labels = {"group": group, "topic": "lineage", "partition": str(partition)}
        assert metric(superuser_client, "lineage_kafka_consumer_lag_messages", **labels) == 0
        age = metric(superuser_client, "lineage_kafka_consumer_report_age_seconds", **labels)
        assert age is not None and age < 120
    dashboard = build_dashboard()
    assert {row.group_id for row in dashboard.kafka_lag} >= {group}
    # The index serves the dashboard cached for a minute per process: an earlier test on
    # this worker may have cached one from before this group's lag was reported.
    cache.delete(CACHE_KEY)
    page = superuser_client.get("/admin/").content.decode()
    assert 'id="lc-kafka"' in page and group in page


def test_lag_metrics_show_at_most_the_documented_1000_partitions(superuser_client: Client) -> None:
    """docs/ingest.md: each scrape reads at most 1,000 rows, in order of group, topic and
    partition (a topic with many partitions, or many groups, is not read whole)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ingest_consumer_lag (group_id, topic, partition, committed_offset, "
            "high_watermark, member, reported_at) SELECT 'many', 'wide', p, 0, 7, 'm', now() "
            "FROM generate_series(0, 1000) AS p"
        )
    text = superuser_client.get("/metrics").content.decode()
    shown = re.findall(r'lineage_kafka_consumer_lag_messages\{[^}]*partition="(\d+)"', text)
    assert sorted(map(int, shown)) == list(range(1000))  # partition 1000 is the 1,001st


def readyz(port: int) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("reachable", [True, False])
def test_consumer_readyz_says_whether_it_is_connected(bootstrap: str, reachable: bool) -> None:
    config = kafka_config.load(
        {
            "BOOTSTRAP_SERVERS": bootstrap if reachable else "127.0.0.1:1",
            "TOPICS": ["lineage"],
            "GROUP_ID": "readyz",
            "PORT": 0,
        }
    )
    consumer = IngestConsumer(config)
    server = serve(consumer, 0, host="127.0.0.1")
    port = server.server_address[1]
    try:
        status, body = readyz(port)
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
    finally:
        server.shutdown()
        consumer.consumer.close()
    assert b"lineage_kafka_batch_store_seconds" in metrics  # the consumer's own counters
    assert body["checks"]["database"] == "ok"
    if reachable:
        assert (status, body["checks"]["kafka"]) == (200, "connected")
    else:
        assert status == 503 and body["checks"]["kafka"].startswith("unavailable")


def test_readyz_turns_unavailable_when_the_broker_vanishes() -> None:
    """docs/ingest.md: 200 *while* it reaches a broker (checked at most once a second,
    ADR 0177): not only whether it ever did."""
    with mock_cluster("vanishing") as address:
        config = kafka_config.load(
            {"BOOTSTRAP_SERVERS": address, "TOPICS": ["vanishing"], "GROUP_ID": "vanish"}
        )
        consumer = IngestConsumer(config)
        server = serve(consumer, 0, host="127.0.0.1")
        port = server.server_address[1]
        assert readyz(port)[0] == 200
    time.sleep(READINESS_SECONDS)  # the answer before is given again for this long
    try:  # the cluster is gone
        status, body = readyz(port)
    finally:
        server.shutdown()
        consumer.consumer.close()
    assert status == 503 and body["checks"]["kafka"].startswith("unavailable")
    assert body["checks"]["database"] == "ok"


def consumer_metric(port: int, name: str, **labels: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        found = re.match(rf"{name}\{{(.*)\}} (\S+)$", line)
        if found and ",".join(sorted(found.group(1).split(","))) == wanted:
            return float(found.group(2))
    return 0.0


def test_messages_total_counts_each_topic_of_a_batch_that_holds_several(bootstrap: str) -> None:
    """lineage_kafka_messages_total is "by topic": a batch holding messages of two topics
    (the documented openlineage + metadata setup) was counted under topic "(several)"."""
    lineage, records = (f"counted-{uuid.uuid4().hex[:8]}" for _ in range(2))
    create_topics(bootstrap, [lineage, records])
    produce(bootstrap, lineage, [ol_event_dict(100 + number) for number in range(12)])
    produce(bootstrap, records, [{"subject": f"s-{n}", "action": "a"} for n in range(8)])
    produce(bootstrap, records, [b"not json"])
    topics = f"{lineage},{records}:metadata"
    consumer = IngestConsumer(
        kafka_config.load({"BOOTSTRAP_SERVERS": bootstrap, "TOPICS": topics.split(",")})
    )
    server = serve(consumer, 0, host="127.0.0.1")
    port = server.server_address[1]
    try:
        consumer.run(exit_when_idle=1.0)
        counted = {
            (topic, outcome): consumer_metric(
                port, "lineage_kafka_messages_total", topic=topic, outcome=outcome
            )
            for topic in (lineage, records, "(several)")
            for outcome in ("created", "duplicate", "dead_letter")
        }
    finally:
        server.shutdown()
    assert {key: value for key, value in counted.items() if value} == {
        (lineage, "created"): 12,
        (records, "created"): 8,
        (records, "dead_letter"): 1,
    }


def test_an_error_of_our_own_refuses_the_message_and_replay_stores_it_after_the_fix(
    bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in reading one message must not stop its partition (nor crash the consumer
    into a restart loop on the same offset): the message becomes a dead letter."""
    from ingest.kafka import messages
    from ingest.kafka.replay import replay

    real = messages.validate_openlineage

    def broken(document: Any, base: str = "") -> Any:
        if document.get("job", {}).get("name") == "trips-the-bug":
            raise KeyError("a bug")
        return real(document, base)

    monkeypatch.setattr(messages, "validate_openlineage", broken)
    event = {**ol_event_dict(3), "job": {"namespace": "bug", "name": "trips-the-bug"}}
    produce(bootstrap, "lineage-2", [event, ol_event_dict(4)])
    consume(bootstrap, "lineage-2")
    letter = DeadLetter.objects.get(reason_code="unexpected-error")
    assert "KeyError" in letter.reason
    assert Event.objects.filter(job_namespace="lag-tests").count() == 1  # the next one
    monkeypatch.setattr(messages, "validate_openlineage", real)  # the code is fixed
    assert replay([letter.id]).stored == [letter.id]
    assert Event.objects.filter(job_namespace="bug").count() == 1

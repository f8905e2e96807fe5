"""Kafka ingest under faults, on real processes: ``manage.py consume_kafka`` SIGKILLed at
several points, PostgreSQL restarted under it (a private cluster), and a rebalance between
two consumers of one group. Each counts the events in the raw log against the messages
produced: nothing lost, nothing stored twice, and every offset committed in the end."""

import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.faults import processes
from tests.ingest.kafka.cluster import committed_total, mock_cluster, produce

pytestmark = [pytest.mark.faults, pytest.mark.timeout(300)]
TOPIC = "fault-lineage"
CONSUME = [str(processes.BIN / "python"), "manage.py", "consume_kafka"]


@pytest.fixture
def bootstrap() -> Iterator[str]:
    with mock_cluster(TOPIC) as address:
        yield address


@pytest.fixture(scope="module")
def bytecode(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the consumers started here keep their compiled bytecode. With
    PYTHONDONTWRITEBYTECODE set (as on CI and in the image's build stage), each start of
    ``manage.py`` compiled some 1,300 modules again: 2.5 CPU-seconds, up to 12 s of a
    shared machine, and these tests start ten consumers. `make test` already keeps it in
    the checkout's ``.pycache`` (ADR 0097), which every other process the suite starts has
    filled: the consumers use it too, instead of compiling everything into a new folder
    once a module (the first consumer started 8-10 s later under load 15, ADR 0205)."""
    inherited = os.environ.get("PYTHONPYCACHEPREFIX")
    return Path(inherited) if inherited else tmp_path_factory.mktemp("bytecode")


def kafka_env(
    database: str, redis_url: str, bootstrap: str, group: str, bytecode: Path
) -> dict[str, str]:
    env = processes.service_env(database, redis_url)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return {
        **env,
        "PYTHONPYCACHEPREFIX": str(bytecode),
        "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        "LINEAGE_KAFKA_TOPICS": TOPIC,
        "LINEAGE_KAFKA_GROUP_ID": group,
        # Small batches, so that a kill falls inside a batch as often as between two.
        "LINEAGE_CONSUMER_BATCH_MESSAGES": "40",
        "LINEAGE_CONSUMER_BATCH_MS": "50",
        "LINEAGE_CONSUMER_PORT": "0",
        # The mock cluster completes a rebalance of a group with members only once every
        # member has rejoined or a session timeout has passed, and a SIGKILLed member never
        # rejoins: at librdkafka's 45 s each kill cost most of a minute. A member is
        # declared dead as soon here (heartbeats come from librdkafka's own thread, so a
        # busy loop does not miss them); what each test proves does not depend on how
        # long a dead member keeps its partitions. 1.5 s, ten heartbeats (3 s before: the
        # kill test waited it out four times, ADR 0205).
        "LINEAGE_KAFKA_SESSION_TIMEOUT_MS": "1500",
        "LINEAGE_KAFKA_HEARTBEAT_INTERVAL_MS": "150",
    }


def events(total: int) -> list[dict[str, Any]]:
    return [
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-11-29T10:00:00Z",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "kafka-faults", "name": f"job-{number % 50}"},
            "producer": "https://example.com/kafka-faults",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
        for number in range(total)
    ]


def stored(database: str) -> int:
    with psycopg.connect(database, connect_timeout=2) as connection:
        row = connection.execute("SELECT count(*) FROM ingest_event").fetchone()
    return int(row[0]) if row else 0


def consumer(env: dict[str, str], log: Path, *options: str) -> processes.Service:
    return processes.Service([*CONSUME, *options], env, log).start()


def drain(env: dict[str, str], log: Path) -> None:
    """One more consumer until it is idle: it reads whatever was not committed."""
    last = consumer(env, log, "--exit-when-idle", "2")
    assert last.process is not None
    assert last.process.wait(timeout=120) == 0, last.output()[-3000:]
    last.stop()


def test_consumer_sigkilled_at_several_points_loses_nothing_and_stores_nothing_twice(
    database: str, bootstrap: str, bytecode: Path, tmp_path: Path
) -> None:
    total = 3000
    group = f"faults-{uuid.uuid4().hex[:8]}"
    produce(bootstrap, TOPIC, events(total))
    with processes.private_redis() as redis:
        env = kafka_env(database, redis.url, bootstrap, group, bytecode)
        for kill_at in (200, 1100, 2300):
            running = consumer(env, tmp_path / "consumer.log")
            try:
                processes.wait_for(
                    lambda at=kill_at: stored(database) >= at, 120, f"{kill_at} stored"
                )
            finally:
                running.kill()
                running.stop()
            assert committed_total(bootstrap, group, TOPIC) <= stored(database)
        drain(env, tmp_path / "consumer.log")
    assert stored(database) == total
    assert committed_total(bootstrap, group, TOPIC) == total


def test_postgres_restart_under_the_consumer_loses_nothing(
    template_url: str, bootstrap: str, bytecode: Path, tmp_path: Path
) -> None:
    total = 3000
    group = f"faults-{uuid.uuid4().hex[:8]}"
    produce(bootstrap, TOPIC, events(total))
    with processes.private_postgres() as cluster, processes.private_redis() as redis:
        database = processes.copy_database(template_url, cluster.url())
        env = kafka_env(database, redis.url, bootstrap, group, bytecode)
        running = consumer(env, tmp_path / "consumer.log")
        try:
            processes.wait_for(lambda: stored(database) >= 400, 120, "the first batches")
            cluster.stop()
            time.sleep(2)
            cluster.start()
            # The same process carries on once PostgreSQL is back.
            processes.wait_for(lambda: stored(database) >= total, 120, "every event", 0.5)
            # The last batch's offsets, committed by the consumer still running (a fixed
            # second before).
            processes.wait_for(
                lambda: committed_total(bootstrap, group, TOPIC) >= total, 60, "the offsets", 0.2
            )
        finally:
            running.stop()
        output = running.output()
        assert "kafka_store_failed" in output, "the outage was meant to be seen"
        assert stored(database) == total
        assert committed_total(bootstrap, group, TOPIC) == total


def test_rebalance_between_two_consumers_loses_nothing(
    database: str, bootstrap: str, bytecode: Path, tmp_path: Path
) -> None:
    group = f"faults-{uuid.uuid4().hex[:8]}"
    produced: list[int] = []
    enough = threading.Event()

    def keep_producing() -> None:
        # Messages keep coming while the partitions move, both ways, until the test has
        # seen the second consumer take over; at most 20,000.
        while not enough.is_set() and sum(produced) < 20000:
            batch = events(100)
            produce(bootstrap, TOPIC, batch)
            produced.append(len(batch))
            time.sleep(0.1)

    producer = threading.Thread(target=keep_producing)
    with processes.private_redis() as redis:
        env = kafka_env(database, redis.url, bootstrap, group, bytecode)
        first = consumer(env, tmp_path / "first.log")
        second = None
        try:
            producer.start()
            processes.wait_for(lambda: stored(database) >= 300, 120, "the first consumer")
            second = consumer(env, tmp_path / "second.log")
            # Cooperative rebalancing: an empty assignment first, then the moved partitions.
            processes.wait_for(
                lambda: f"kafka_assigned partitions={TOPIC}" in second.output(),
                120,
                "partitions moved to the second consumer",
            )
            moved_at = stored(database)
            processes.wait_for(
                lambda: stored(database) >= moved_at + 400, 120, "both consumers storing"
            )
            first.stop()  # SIGTERM: stores and commits what it holds, leaves the group
            left_at = stored(database)
            processes.wait_for(
                lambda: stored(database) >= left_at + 400, 120, "the second alone, every partition"
            )
            enough.set()
            producer.join(timeout=120)
            total = sum(produced)
            processes.wait_for(lambda: stored(database) >= total, 120, "every event", 0.5)
            # Commits refused while the group rebalanced are made by the partitions' next
            # owner, which reads those messages again, or again by the member that kept
            # the partitions (ADR 0151).
            processes.wait_for(
                lambda: committed_total(bootstrap, group, TOPIC) >= total, 180, "the offsets", 1
            )
        finally:
            enough.set()
            first.stop()
            if second is not None:
                second.stop()
            producer.join(timeout=120)
    assert "kafka_revoked" in first.output()
    assert f"kafka_assigned partitions={TOPIC}" in second.output()
    taken_over = re.search(r"stopped after (\d+) messages", second.output())
    assert taken_over is not None and int(taken_over.group(1)) > 0, second.output()[-3000:]
    assert stored(database) == total
    assert committed_total(bootstrap, group, TOPIC) == total

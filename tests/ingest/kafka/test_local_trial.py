"""`make run` with LINEAGE_KAFKA_BOOTSTRAP_SERVERS=mock: the mock cluster is started, the
consumer is given its address and default topics, and stores what a producer sends."""

import importlib.util
import subprocess
from typing import Any

import pytest

from ingest.models import Event
from tests.faults.processes import current_database_url, service_env
from tests.ingest.kafka.cluster import ROOT, produce
from tests.ingest.kafka.test_consume import ol_event_dict


def run_local() -> Any:
    spec = importlib.util.spec_from_file_location("run_local", ROOT / "scripts" / "run_local.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_consumer_without_kafka_settings() -> None:
    assert run_local().kafka_commands({}) == {}


@pytest.mark.django_db(transaction=True)
def test_make_run_mock_setting_starts_a_cluster_and_the_consumer_reads_it() -> None:
    env = {
        **service_env(current_database_url(), "redis://127.0.0.1:1/0"),
        "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": "mock",
        "LINEAGE_CONSUMER_PORT": "0",
    }
    commands = run_local().kafka_commands(env)
    command, environment = commands["consumer"]
    address = environment["LINEAGE_KAFKA_BOOTSTRAP_SERVERS"]
    assert address.startswith("127.0.0.1:")
    assert environment["LINEAGE_KAFKA_TOPICS"] == "openlineage,metadata:metadata"
    produce(address, "openlineage", [ol_event_dict(7)])
    produce(address, "metadata", [{"subject": "s", "action": "a"}])
    finished = subprocess.run(
        [*command, "--exit-when-idle", "2"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert Event.objects.filter(job_namespace="lag-tests").count() == 1
    assert Event.objects.filter(kind="metadata").count() == 1

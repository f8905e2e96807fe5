"""/metrics: Prometheus text with latency, ingest outcomes, derivation backlog, task failures."""

import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from ingest.metrics import TASK_FAILURES
from ingest.models import Event
from tests.deploy.rendering import ROOT
from tests.ingest.helpers import BATCH, LINEAGE, run_event, second_connection

pytestmark = pytest.mark.django_db


def scrape(client: Client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _post(client: Client, url: str, document: object) -> int:
    return client.post(url, orjson.dumps(document), content_type="application/json").status_code


def test_ingest_counts_created_duplicate_and_refused_by_kind(ingest_client: Client) -> None:
    before = scrape(Client())
    event = run_event()
    assert _post(ingest_client, LINEAGE, event) == 201
    assert _post(ingest_client, LINEAGE, event) == 200
    assert _post(ingest_client, BATCH, [run_event(), run_event(eventTime="never")]) == 200
    after = scrape(Client())

    def delta(outcome: str, kind: str) -> float:
        name = "lineage_ingest_events_total"
        return value(after, name, kind=kind, outcome=outcome) - value(
            before, name, kind=kind, outcome=outcome
        )

    assert delta("created", "run") == 2
    assert delta("duplicate", "run") == 1
    assert delta("refused", "unknown") == 1


def _event(status: str, age: timedelta = timedelta(0)) -> Event:
    event = Event.objects.create(
        kind="run",
        payload={"n": str(uuid.uuid4())},
        digest=uuid.uuid4().bytes * 2,
        derivation_status=status,
    )
    Event.objects.filter(id=event.id).update(received_at=timezone.now() - age)
    return event


def test_backlog_lag_and_failures_are_read_from_the_event_log() -> None:
    Event.objects.all().update(derivation_status="derived")
    empty = scrape(Client())
    assert value(empty, "lineage_metrics_database_up") == 1
    assert value(empty, "lineage_derivation_backlog_events") == 0
    assert value(empty, "lineage_derivation_lag_seconds") == 0
    _event("pending", timedelta(minutes=5))
    _event("pending")
    _event("failed")
    _event("derived", timedelta(hours=2))
    samples = scrape(Client())
    assert value(samples, "lineage_derivation_backlog_events") == 2
    assert 299 <= value(samples, "lineage_derivation_lag_seconds") < 400
    assert value(samples, "lineage_derivation_failed_events") == 1


def test_request_latency_is_observed_by_route(settings: object) -> None:
    settings.MIDDLEWARE = ["ingest.metrics.RequestLatencyMiddleware", *settings.MIDDLEWARE]  # type: ignore[attr-defined]
    client = Client()
    before = scrape(client)
    assert client.get("/healthz").status_code == 200
    assert client.get("/no-such-page").status_code == 404
    after = scrape(client)
    name = "lineage_http_request_duration_seconds_count"
    healthz = {"method": "GET", "route": "healthz", "status": "200"}
    missing = {"method": "GET", "route": "unmatched", "status": "404"}
    assert value(after, name, **healthz) - value(before, name, **healthz) == 1
    assert value(after, name, **missing) - value(before, name, **missing) == 1


def test_task_failures_are_counted_from_the_celery_signal() -> None:
    from celery import signals

    class Task:
        name = "catalog.derive_events"

    before = TASK_FAILURES.labels("catalog.derive_events")._value.get()
    signals.task_failure.send(sender=Task(), task_id="1", exception=RuntimeError("boom"))
    after = TASK_FAILURES.labels("catalog.derive_events")._value.get()
    assert after - before == 1


@pytest.mark.timeout(120)
def test_multiprocess_mode_adds_up_every_process(tmp_path: Path) -> None:
    """Two processes, as two web workers, count ingest; a third renders their sum."""
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    count = (
        "import django; django.setup(); from ingest.metrics import INGESTED_EVENTS; "
        "INGESTED_EVENTS.labels('edge', 'created').inc(3)"
    )
    for _ in range(2):
        subprocess.run([sys.executable, "-c", count], cwd=ROOT, env=env, check=True, timeout=60)
    render = (
        "import django; django.setup(); from ingest.metrics import process_registry; "
        "from prometheus_client import generate_latest; "
        "print(generate_latest(process_registry()).decode())"
    )
    output = subprocess.run(
        [sys.executable, "-c", render],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=60,
        text=True,
        capture_output=True,
    ).stdout
    assert 'lineage_ingest_events_total{kind="edge",outcome="created"} 6.0' in output


def test_a_scrape_does_not_wait_for_a_locked_event_log() -> None:
    """DerivationCollector's promise: a scrape never waits on a busy database for long. A
    migration holding the event log's lock answers ``database_up 0`` after the 2-second
    statement timeout, not when the lock goes (released here after 8 s at the latest, so
    that the test ends even when the promise is broken)."""
    with second_connection() as other:
        other.execute("BEGIN")
        other.execute("LOCK TABLE ingest_event IN ACCESS EXCLUSIVE MODE")
        release = threading.Timer(8, other.execute, ["ROLLBACK"])
        release.start()
        try:
            started = time.monotonic()
            samples = scrape(Client())
            waited = time.monotonic() - started
        finally:
            release.cancel()
            other.execute("ROLLBACK")
    assert value(samples, "lineage_metrics_database_up") == 0
    assert waited < 5

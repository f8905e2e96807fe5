"""Ingest depends on PostgreSQL only: broker outages are invisible, database outages are 503s."""

import itertools
import time
from collections.abc import Iterator

import pytest
from celery import current_app
from django.conf import settings
from django.db import connections
from django.test import Client

from ingest import enqueue
from ingest.models import DerivationStatus, Event
from ingest.services import create_token
from tests.ingest.helpers import LINEAGE, post_json, run_event

CLOSED_PORT = "9"  # discard: nothing listens there on the test machines


def _forget_broker_connections() -> None:
    # Celery caches connections in two pools; both remember the broker address.
    current_app._pool = None
    current_app.amqp._producer_pool = None


@pytest.fixture
def broker_unreachable(no_task_waiting) -> Iterator[None]:
    original = current_app.conf.broker_url
    current_app.conf.broker_url = f"redis://127.0.0.1:{CLOSED_PORT}/0"
    _forget_broker_connections()
    enqueue._skip_broker_until = 0.0
    yield
    current_app.conf.broker_url = original
    _forget_broker_connections()
    enqueue._skip_broker_until = 0.0


@pytest.mark.django_db
def test_ingest_answers_201_when_the_broker_is_down(
    ingest_client, broker_unreachable, django_capture_on_commit_callbacks
) -> None:
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        first = post_json(ingest_client, LINEAGE, run_event())
    assert enqueue.wait_until_published(timeout=10)
    with django_capture_on_commit_callbacks(execute=True):
        second = post_json(ingest_client, LINEAGE, run_event())
    elapsed = time.monotonic() - started
    assert (first.status_code, second.status_code) == (201, 201)
    assert len(callbacks) == 1  # the hand-over to the publisher happened after commit
    assert enqueue._skip_broker_until > 0  # the publish failed and the publisher backs off
    # No task went out, so none is marked waiting: the next publish is not skipped.
    assert not _marker().exists(enqueue.QUEUED_KEY)
    assert elapsed < 5, f"a broker outage must not stall ingest ({elapsed:.1f}s)"
    statuses = set(Event.objects.values_list("derivation_status", flat=True))
    assert statuses == {DerivationStatus.PENDING}  # left for the periodic sweep


@pytest.mark.django_db
def test_published_task_carries_the_new_event_ids(
    ingest_client, django_capture_on_commit_callbacks, monkeypatch, no_task_waiting
) -> None:
    sent: list[tuple[str, list]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args: sent.append((name, args))
    )  # the broker itself is exercised by the catalog's end-to-end tests
    with django_capture_on_commit_callbacks(execute=True):
        first = post_json(ingest_client, LINEAGE, run_event()).json()["id"]
    assert enqueue.wait_until_published(timeout=10)
    assert sent == [("catalog.derive_events", [[first]])]


def test_no_second_task_is_published_while_one_waits(monkeypatch, no_task_waiting) -> None:
    """Every derive task drains what is pending, so one waiting task is enough: later
    bursts are not published until a worker starts it (ADR 0053)."""
    sent: list[list[int]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args: sent.append(args[0]))
    handed = list(range(10**9, 10**9 + 30))
    for event_id in handed:  # 300 ms of single-event requests: three intervals at least
        enqueue._hand_over([event_id])
        time.sleep(0.01)
    assert enqueue.wait_until_published(timeout=10)
    assert len(sent) == 1 and sent[0] == handed[: len(sent[0])]
    assert 0 < _marker().ttl(enqueue.QUEUED_KEY) <= enqueue.QUEUED_TTL_SECONDS
    enqueue.derive_task_started()  # the worker took it: the next burst is published
    enqueue._hand_over([7])
    assert enqueue.wait_until_published(timeout=10)
    assert sent[1:] == [[7]]


def _marker():
    marker = enqueue._marker()
    assert marker is not None  # the test broker is Redis
    return marker


@pytest.mark.django_db
def test_enqueue_happens_only_after_commit(
    ingest_client, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_json(ingest_client, LINEAGE, run_event())
        assert response.status_code == 201
    assert len(callbacks) == 1


@pytest.mark.django_db(transaction=True)
def test_database_down_is_a_503_with_retry_after_and_recovers() -> None:
    secret = create_token("db down", "ingest")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    connection = connections["default"]
    original_port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = CLOSED_PORT
    try:
        response = post_json(client, LINEAGE, run_event())
        assert response.status_code == 503
        assert response["Retry-After"] == "5"
        assert response.json()["type"] == "urn:lineage-catalog:problem:database-unavailable"
        assert response.json()["detail"] == "Nothing was stored. Retry the same request later."
    finally:
        connection.close()
        connection.settings_dict["PORT"] = original_port
    assert post_json(client, LINEAGE, run_event()).status_code == 201
    assert Event.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_database_that_does_not_answer_is_a_503_after_the_connect_timeout() -> None:
    """docs/deploy.md, database.connectTimeout: seconds before a request gives up and
    answers 503. A server that accepts the connection and never answers (a host gone
    silent, a full pooler) must not hold a worker thread: DATABASE_CONNECT_TIMEOUT, as the
    settings read it in a fresh process, bounds the wait."""
    import json
    import os
    import socket
    import subprocess
    import sys

    read = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from django.conf import settings;"
            "print(json.dumps(settings.DATABASES['default']['OPTIONS']))",
        ],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_CONNECT_TIMEOUT": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    options = json.loads(read.stdout.strip().splitlines()[-1])
    assert options["connect_timeout"] == 1
    secret = create_token("silent db", "ingest")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    with socket.create_server(("127.0.0.1", 0), backlog=8) as silent:  # accepts, never speaks
        connection.close()
        connection.settings_dict["PORT"] = str(silent.getsockname()[1])
        connection.settings_dict["OPTIONS"] = {**saved["OPTIONS"], **options}
        try:
            started = time.monotonic()
            response = post_json(client, LINEAGE, run_event())
            took = time.monotonic() - started
        finally:
            connection.close()
            connection.settings_dict.update(saved)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert took < 5, took  # one timeout (libpq may try each address of the host once)
    assert post_json(client, LINEAGE, run_event()).status_code == 201


@pytest.mark.django_db
def test_healthz_is_always_ok() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_database_migrations_and_broker() -> None:
    response = Client().get("/readyz")
    assert response.status_code == 200
    checks = response.json()["checks"]
    assert checks["database"] == "ok"
    assert checks["migrations"] == "ok"
    assert checks["broker"] == "ok"


@pytest.mark.django_db(transaction=True)
def test_healthz_is_ok_without_the_database_or_the_broker(settings) -> None:
    """docs/deploy.md: /healthz is liveness, the process only. A database or Redis outage
    must not fail it, or the kubelet would restart every web pod while PostgreSQL is away
    (readiness takes them out of the Service instead)."""
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{CLOSED_PORT}/0"
    connection = connections["default"]
    original_port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = CLOSED_PORT
    try:
        for _ in range(2):  # the first request after the outage began, and the next
            response = Client().get("/healthz")
            assert response.status_code == 200
            assert response.json() == {"status": "ok"}
    finally:
        connection.close()
        connection.settings_dict["PORT"] = original_port


@pytest.mark.django_db(transaction=True)
def test_readyz_is_503_without_the_database() -> None:
    connection = connections["default"]
    original_port = connection.settings_dict["PORT"]
    connection.close()
    connection.settings_dict["PORT"] = CLOSED_PORT
    try:
        response = Client().get("/readyz")
    finally:
        connection.close()
        connection.settings_dict["PORT"] = original_port
    assert response.status_code == 503
    assert response.json()["checks"]["database"].startswith("unavailable")


@pytest.mark.django_db
def test_readyz_is_503_while_a_migration_is_pending(monkeypatch) -> None:
    """docs/deploy.md: ready means migrations applied. A pod of a release whose migrations
    have not run (the hook still running, or failed) answers 503, so it gets no traffic."""
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    from ingest import health

    monkeypatch.setattr(health, "_migrations_done", False)  # as in a process just started
    latest = MigrationRecorder(connection).migration_qs.filter(app="catalog").latest("id")
    latest.delete()  # rolled back with the test's transaction

    response = Client().get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"] == {
        "database": "ok",
        "migrations": "pending",
        "broker": "ok",
    }


@pytest.mark.django_db
def test_readyz_reports_a_broker_that_is_down_and_stays_ready(settings) -> None:
    """docs/deploy.md: the broker's state is reported, not required (ingest goes on while
    Redis is down), so a Redis outage takes no web pod out of its Service."""
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{CLOSED_PORT}/0"

    response = Client().get("/readyz")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["checks"]["broker"].startswith("unavailable")


def test_a_busy_process_publishes_at_most_one_task_per_interval(
    monkeypatch, no_task_waiting
) -> None:
    """A publish costs a good part of an event's ingest CPU: under a stream of events the
    publisher sends one task per LINEAGE["ENQUEUE_INTERVAL_MS"], carrying every id once."""
    sent: list[tuple[float, list[int]]] = []

    def send_and_start(name, args):  # a worker that starts each task at once
        sent.append((time.monotonic(), args[0]))
        enqueue.derive_task_started()

    monkeypatch.setattr(current_app, "send_task", send_and_start)
    handed = list(range(10**9, 10**9 + 40))
    for event_id in handed:  # one id every 10 ms, as single-event requests arrive
        enqueue._hand_over([event_id])
        time.sleep(0.01)
    assert enqueue.wait_until_published(timeout=10)
    published = [event_id for _, batch in sent for event_id in batch]
    assert sorted(published) == handed
    interval = settings.LINEAGE["ENQUEUE_INTERVAL_MS"] / 1000
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(sent)]
    assert len(sent) >= 2 and min(gaps) >= interval * 0.95, gaps


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url", ["sentinel://127.0.0.1:26379/0", "amqp://guest@127.0.0.1:5672//", "redis://host:port"]
)
def test_readyz_reports_a_broker_it_cannot_ping_and_stays_ready(settings, url: str) -> None:
    """The broker is only reported (readyz' docstring), whatever its URL: one redis-py
    cannot open (another kombu transport, a mistyped port) was a ValueError, a 500, and the
    pod never became ready."""
    settings.CELERY_BROKER_URL = url

    response = Client().get("/readyz")

    assert response.status_code == 200
    assert response.json()["checks"]["broker"].startswith("not checked")

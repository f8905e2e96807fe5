"""catalog/tasks.py: "Transient database trouble (connection lost, deadlock, failover) is
retried with backoff" (ADR 0200). A real Celery worker takes a derive task; its batch waits
on a lock the test holds, and the test ends the worker's PostgreSQL connection
(``pg_terminate_backend``, as a failover or an administrator does). The task fails with
the lost connection, is retried after its backoff on a new connection, and derives the
event; nothing else (no scheduler, no sweep, a Redis of its own: no task left by another
test) runs that could derive it."""

import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings
from django.db import connection, transaction

from ingest.models import Event
from tests.catalog.conftest import run_event
from tests.catalog.helpers import openlineage, store
from tests.faults import processes

WAITING = """
SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_a_derive_task_whose_connection_is_lost_is_retried_and_derives(tmp_path: Path) -> None:
    (event_id,) = store([openlineage(run_event("COMPLETE", 0, str(uuid.uuid4())))])
    with processes.private_redis() as redis:
        env = processes.service_env(processes.current_database_url(), redis.url)
        broker = Celery(broker=redis.url)
        worker = processes.worker(env, tmp_path / "worker.log", concurrency=1)
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("LOCK TABLE catalog_job IN ACCESS EXCLUSIVE MODE")
                broker.send_task(
                    settings.LINEAGE["DERIVE_TASK"],
                    args=[[event_id]],
                    queue=settings.CELERY_TASK_DEFAULT_QUEUE,
                )
                waiting: list[int] = []

                def batch_waits() -> bool:
                    cursor.execute("SELECT pg_stat_clear_snapshot()")  # anew in the transaction
                    cursor.execute(WAITING)
                    waiting[:] = [row[0] for row in cursor.fetchall()]
                    return len(waiting) == 1

                try:
                    processes.wait_for(batch_waits, 60, "the worker's batch waiting on the lock")
                except TimeoutError:
                    pytest.fail(f"the batch never waited: {worker.output()[-3000:]}")
                cursor.execute("SELECT pg_terminate_backend(%s)", [waiting[0]])
            processes.wait_for(
                lambda: Event.objects.get(pk=event_id).derivation_status == "derived",
                30,
                "the retried task deriving the event",
            )
        finally:
            worker.stop()
            broker.close()
    log = worker.output()
    assert "Retry in" in log and "OperationalError" in log, log[-3000:]

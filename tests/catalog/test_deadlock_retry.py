"""catalog/services/derivation/batch.py: ``retrying`` "run[s] ``operation`` (a whole
transaction) again after a deadlock" (ADR 0200), held against a real PostgreSQL deadlock.

Another transaction holds the job row a batch must fold its run into; the batch, having
claimed its event, waits for that row; the other transaction then asks for the claimed
event. PostgreSQL breaks the cycle by failing the batch (40P01; the other transaction's
``deadlock_timeout`` is made long, so the batch is the one that finds the cycle). The batch
is run again once the other transaction has ended, and derives its event."""

import logging
import threading
import time
import uuid
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection, connections, transaction

from catalog.models import Job
from catalog.services.derivation import batch
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.conftest import run_event
from tests.catalog.helpers import openlineage, store

WAITING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
"""


def _until(condition: Any, what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _waiting() -> int:
    with connection.cursor() as cursor:
        cursor.execute(WAITING)
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_a_batch_failed_by_a_real_deadlock_is_run_again_and_derives(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="catalog.services.derivation.batch")
    derive_events(store([openlineage(run_event("START", 0, str(uuid.uuid4())))]))
    job_id = Job.objects.get().pk
    (event_id,) = store([openlineage(run_event("COMPLETE", 5, str(uuid.uuid4())))])
    job_held, ask_for_event, released = threading.Event(), threading.Event(), threading.Event()
    # The retry waits for the other transaction to end (its own pause, 10 ms, would race it).
    monkeypatch.setattr(batch, "time", SimpleNamespace(sleep=lambda seconds: released.wait(20)))
    answers: dict[str, Any] = {}

    def other_writer() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL deadlock_timeout = '30s'")
                cursor.execute("SELECT 1 FROM catalog_job WHERE id = %s FOR UPDATE", [job_id])
                job_held.set()
                assert ask_for_event.wait(20)
                cursor.execute("SELECT 1 FROM ingest_event WHERE id = %s FOR UPDATE", [event_id])
        finally:
            released.set()
            connection.close()

    def worker() -> None:
        try:
            answers["result"] = derive_events([event_id])
        except BaseException as error:  # said by the assertion below
            answers["error"] = error
        finally:
            connection.close()

    writer = threading.Thread(target=other_writer)
    writer.start()
    assert job_held.wait(20)
    deriving = threading.Thread(target=worker)
    deriving.start()
    _until(lambda: _waiting() == 1, "the batch never waited for the job row")
    ask_for_event.set()
    writer.join(30)
    deriving.join(30)
    assert "error" not in answers, answers.get("error")
    assert (answers["result"].claimed, answers["result"].derived) == (1, 1)
    assert "derive_retry attempt=1 sqlstate=40P01" in caplog.text
    assert Event.objects.get(pk=event_id).derivation_status == "derived"
    connections.close_all()

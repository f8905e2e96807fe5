"""``manage.py rederive`` while the service serves, and stopped half way: a worker's batch
holds some of the events the rederive set pending (claims skip locked rows), and the
rederive must not end, and forget the ids it remembered (ADR 0077), while that batch is
still in hand; a rederive killed half way leaves the remembered ids to the next, which
keeps every id (docs/deploy.md)."""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection, transaction

from catalog.models import Dataset, Job
from catalog.services.derive import derive_events, derive_pending_batch
from ingest.models import Event
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

HOLD_SECONDS = 2.0


def _derived_store(count: int) -> list[int]:
    events = [
        run_event(
            "COMPLETE",
            index,
            str(uuid.uuid4()),
            job=("etl", f"job{index:02}"),
            inputs=[dataset("pg://db:5432", f"in{index:02}")],
            outputs=[dataset("s3://lake", f"out{index:02}")],
        )
        for index in range(count)
    ]
    ids = store([openlineage(event) for event in events])
    assert derive_events(ids).failed == 0
    return ids


def _ids() -> dict[str, int]:
    jobs = {f"job {name}": pk for name, pk in Job.objects.values_list("name", "id")}
    datasets = {f"dataset {name}": pk for name, pk in Dataset.objects.values_list("name", "id")}
    return {**jobs, **datasets}


@pytest.mark.django_db(transaction=True)
def test_a_rederive_waits_for_the_events_a_worker_holds_and_keeps_every_id() -> None:
    ids = _derived_store(30)
    before = _ids()
    held = max(ids)  # claimed in id order: the rederive reaches it last
    released: list[float] = []
    errors: list[BaseException] = []

    def worker() -> None:
        """A worker that claims the newest event once the rederive set it pending, and
        holds it (its batch deriving) until it is killed."""
        try:
            deadline = time.monotonic() + 60
            while not Event.objects.filter(id=held, derivation_status="pending").exists():
                assert time.monotonic() < deadline, "the rederive never set it pending"
                time.sleep(0.002)
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM ingest_event WHERE id = %s FOR NO KEY UPDATE SKIP LOCKED",
                    [held],
                )
                assert cursor.fetchall() == [(held,)], "the rederive claimed it first"
                time.sleep(HOLD_SECONDS)
                released.append(time.monotonic())
                transaction.set_rollback(True)  # killed: its events come free, pending
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    call_command("rederive", "--batch-size", "1", verbosity=0)
    ended = time.monotonic()
    thread.join()
    assert not errors, errors
    assert released and ended >= released[0]
    assert not Event.objects.filter(derivation_status="pending").exists()
    derive_pending_batch(0)  # what the sweep would do with anything left
    assert _ids() == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_a_rederive_stopped_half_way_and_run_again_keeps_every_id(stop: signal.Signals) -> None:
    """As an operator runs it: ``manage.py rederive`` in its own process, stopped once it
    has derived some of the events again (the pod killed, or Ctrl-C), then run again."""
    _derived_store(40)
    before = _ids()
    database = connection.settings_dict
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    process = subprocess.Popen(
        [sys.executable, "manage.py", "rederive", "--batch-size", "1", "--verbosity", "2"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": url, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("derived ") and int(line.split()[1]) >= 10:
                break
        else:
            pytest.fail(f"it never derived 10: {process.stderr.read() if process.stderr else ''}")
        process.send_signal(stop)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode != 0
    assert Event.objects.filter(derivation_status="pending").exists()  # it did stop half way
    call_command("rederive", verbosity=0)
    assert not Event.objects.exclude(derivation_status="derived").exists()
    assert _ids() == before

"""catalog.services.labels under two connections (the real PostgreSQL): a steward's label
committed while a derivation batch waits for the labelled row is projected by the batch;
two descriptions of one tag at once leave one row, the later."""

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from catalog.models import Dataset, Job, LabelKind, TagDescription
from catalog.services import labels
from catalog.services.derivation import batch
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db(transaction=True)


def _event(seconds: float, run_id: str) -> list[int]:
    event = run_event(
        "COMPLETE", seconds, run_id, job=("ns", "load"), outputs=[dataset("pg://db", "t")]
    )
    return store([openlineage(event)])


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def _label_while_a_batch_waits(
    holder: Callable[[], Dataset | Job], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The steward's edit has projected its label under the row's lock and not committed;
    a batch deriving a later event of the same job and dataset starts and waits for that
    lock; the edit commits; the batch goes on."""
    derive_events(_event(0, "00000000-0000-0000-0000-000000000001"))
    pending = _event(60, "00000000-0000-0000-0000-000000000002")
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    projected, commit = threading.Event(), threading.Event()
    audit = labels._audit

    def audit_then_wait(*args: Any) -> None:
        audit(*args)
        projected.set()
        assert commit.wait(10)

    monkeypatch.setattr(labels, "_audit", audit_then_wait)
    errors: list[BaseException] = []
    pids: list[int] = []

    def run(work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    steward_edit = threading.Thread(
        target=run, args=(lambda: labels.label_holder(steward, holder(), LabelKind.TAG, "pii"),)
    )
    steward_edit.start()
    assert projected.wait(10)

    def derive() -> None:
        connection.ensure_connection()
        pids.append(connection.connection.info.backend_pid)
        batch.derive_event_ids(pending)

    deriving = threading.Thread(target=run, args=(derive,))
    deriving.start()
    deadline = time.monotonic() + 10
    while not (pids and _waiting_for_a_lock(pids[0])):
        assert time.monotonic() < deadline, "the batch never waited for the edit's lock"
        time.sleep(0.01)
    commit.set()
    steward_edit.join(10)
    deriving.join(10)
    assert not errors, errors


def _steward_tags(row: Dataset | Job) -> list[str]:
    row.refresh_from_db()
    return [entry["key"] for entry in row.tags if entry["source"] == labels.STEWARD]


def test_a_job_label_committed_while_a_batch_waits_for_the_job_is_kept(monkeypatch) -> None:
    _label_while_a_batch_waits(Job.objects.get, monkeypatch)
    assert _steward_tags(Job.objects.get()) == ["pii"]


def test_a_dataset_label_committed_while_a_batch_waits_for_it_is_kept(monkeypatch) -> None:
    _label_while_a_batch_waits(Dataset.objects.get, monkeypatch)
    assert _steward_tags(Dataset.objects.get()) == ["pii"]


def test_two_descriptions_of_a_tag_at_once_leave_one_row_the_later(monkeypatch) -> None:
    """labels.describe_tag: the first caller has written its description and not committed;
    the second's upsert waits for it and, once it commits, writes over it."""
    first_written, commit = threading.Event(), threading.Event()
    audit = labels._audit

    def audit_then_wait(*args: Any) -> None:
        audit(*args)
        if not first_written.is_set():  # the first caller only
            first_written.set()
            assert commit.wait(10)

    monkeypatch.setattr(labels, "_audit", audit_then_wait)
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    errors: list[BaseException] = []
    pids: list[int] = []

    def describe(text: str) -> None:
        try:
            connection.ensure_connection()
            pids.append(connection.connection.info.backend_pid)
            labels.describe_tag(steward, "pii", text)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    first = threading.Thread(target=describe, args=("personal data",))
    first.start()
    assert first_written.wait(10)
    second = threading.Thread(target=describe, args=("personal data, see the DPO",))
    second.start()
    deadline = time.monotonic() + 10
    while not (len(pids) == 2 and _waiting_for_a_lock(pids[1])):
        assert time.monotonic() < deadline, "the second caller never waited for the first"
        time.sleep(0.01)
    commit.set()
    first.join(10)
    second.join(10)
    assert not errors, errors
    assert list(TagDescription.objects.values_list("name", "description")) == [
        ("pii", "personal data, see the DPO")
    ]

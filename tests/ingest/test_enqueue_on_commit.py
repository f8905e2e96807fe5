"""docs/architecture.md, the ingest line: INSERT → COMMIT → 201 → on_commit: enqueue.

tests/catalog/test_tasks_and_claims.py sees the task sent once the request has committed,
tests/ingest/test_availability.py that a request registers its hand-over on commit; this
sees what that buys, on the service function every ingest path calls: inside a transaction
that has not committed nothing reaches the broker, and one that rolls back sends nothing
(a derive task for an event that was never stored).
"""

import uuid

import pytest
from django.db import transaction

from ingest import enqueue
from ingest.services import record_events
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage

pytestmark = pytest.mark.django_db


def _record():
    event = run_event("COMPLETE", 1, str(uuid.uuid4()), outputs=[dataset("s3://b", "o")])
    return openlineage(event)


@pytest.fixture
def sent(monkeypatch, no_task_waiting) -> list:
    sent: list = []
    monkeypatch.setattr(
        enqueue.current_app, "send_task", lambda name, args: sent.append((name, args))
    )
    return sent


def test_nothing_is_sent_before_commit_and_nothing_for_a_rollback(
    sent, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        [stored] = record_events([_record()])
        assert stored.created
        # Were it handed over now, the publisher would send it within this wait.
        assert enqueue.wait_until_published(timeout=1.0)
        assert sent == []
        transaction.set_rollback(True)
    assert callbacks == []
    assert enqueue.wait_until_published()
    assert sent == []


def test_a_committed_store_is_sent_after_its_commit(
    sent, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        [stored] = record_events([_record()])
        assert enqueue.wait_until_published(timeout=1.0)
        assert sent == []
    assert enqueue.wait_until_published()
    assert sent == [("catalog.derive_events", [[stored.id]])]

"""catalog/notify/outbox.py: "a batch derived twice or a task run twice brings no key that
is new, so nothing is enqueued twice", held when the two derive transactions that write the
same change run at once (ADR 0200). The first holds its ledger keys uncommitted while the
second enqueues the same changes: the second waits on the keys' unique index, then finds
them seen, and writes and publishes nothing."""

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from catalog.models import DatasetChange, NotifiedChange, WebhookDelivery, WebhookSubscription
from catalog.notify import outbox
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, load

WAITING_ON_A_LOCK = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
"""


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_two_transactions_enqueuing_the_same_new_changes_at_once_enqueue_them_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    published: list[list[str]] = []
    monkeypatch.setattr(outbox, "publish", lambda ids, countdown=None: published.append(ids))
    derive(load(V1, 0, 0), load(V2, 100, 1))  # three changes, no subscription yet
    NotifiedChange.objects.all().delete()  # as if never seen: both transactions find them new
    WebhookSubscription.objects.create(name="race", url="http://127.0.0.1:9/hook")
    changes = list(DatasetChange.objects.all())
    assert len(changes) == 3
    enqueued, go = threading.Event(), threading.Event()
    answers: dict[str, Any] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                answers["first"] = outbox.enqueue(changes)
                enqueued.set()
                assert go.wait(20)  # commit only once the second waits on these keys
        finally:
            connection.close()

    def second() -> None:
        try:
            with transaction.atomic():
                answers["second"] = outbox.enqueue(changes)
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert enqueued.wait(20)
    threads[1].start()
    deadline = time.monotonic() + 20
    with connection.cursor() as cursor:
        while True:
            cursor.execute(WAITING_ON_A_LOCK)
            if cursor.fetchone()[0]:
                break
            assert time.monotonic() < deadline, "the second never waited on the first's keys"
            time.sleep(0.02)
    go.set()
    for thread in threads:
        thread.join(20)
    assert answers == {"first": 3, "second": 0}
    assert WebhookDelivery.objects.count() == 3
    assert len(published) == 1 and sorted(published[0]) == sorted(
        str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)
    )


class _RolledBack(Exception):
    pass


@pytest.mark.django_db(transaction=True)
def test_deliveries_of_a_derive_transaction_that_rolls_back_are_neither_kept_nor_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """outbox.py: "The deliveries commit or roll back with the changes; one task for them is
    sent by name after commit"."""
    published: list[list[str]] = []
    monkeypatch.setattr(outbox, "publish", lambda ids, countdown=None: published.append(ids))
    derive(load(V1, 0, 0), load(V2, 100, 1))
    NotifiedChange.objects.all().delete()
    WebhookSubscription.objects.create(name="rolled back", url="http://127.0.0.1:9/hook")
    changes = list(DatasetChange.objects.all())
    with pytest.raises(_RolledBack), transaction.atomic():
        assert outbox.enqueue(changes) == 3
        raise _RolledBack  # the derive transaction fails after writing its outbox
    assert (NotifiedChange.objects.count(), WebhookDelivery.objects.count()) == (0, 0)
    assert published == []
    with transaction.atomic():  # derived again: the changes are new, and sent once
        assert outbox.enqueue(changes) == 3
    assert WebhookDelivery.objects.count() == 3 and len(published) == 1

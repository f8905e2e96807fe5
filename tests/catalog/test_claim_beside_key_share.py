"""ingest/derivation_status.py: claims take ``FOR NO KEY UPDATE``, "not UPDATE: another
batch's foreign-key check on an event (a change record's evidence, ADR 0088) holds KEY
SHARE on it, which FOR UPDATE SKIP LOCKED would take as "claimed", leaving a retried
batch's own event pending until the sweep" (ADR 0200). Another transaction holds KEY SHARE
on a pending event, as that check does, while a batch claims it: the batch derives it."""

import threading
import uuid

import pytest
from django.db import connection, transaction

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.conftest import run_event
from tests.catalog.helpers import openlineage, store


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_an_event_another_transaction_holds_key_share_on_is_claimed_and_derived() -> None:
    (event_id,) = store([openlineage(run_event("COMPLETE", 0, str(uuid.uuid4())))])
    held, done = threading.Event(), threading.Event()

    def foreign_key_check() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SELECT 1 FROM ingest_event WHERE id = %s FOR KEY SHARE", [event_id])
                held.set()
                assert done.wait(20)  # held until the batch has claimed (or skipped) it
        finally:
            connection.close()

    checker = threading.Thread(target=foreign_key_check)
    checker.start()
    try:
        assert held.wait(20)
        result = derive_events([event_id])
    finally:
        done.set()
        checker.join(20)
    assert (result.claimed, result.derived) == (1, 1)
    assert Event.objects.get(pk=event_id).derivation_status == "derived"

"""docs/derivation.md, "Rederive": ``manage.py rederive --since T`` derives again the events
with eventTime >= T and all events of their runs on top of the current catalog. With no code
or rule changed, that is a redelivery of those events: by "Order independence" (a
re-derived run never counts twice, every value a join) it must change nothing, at any T,
and, per docs/notifications.md, record no change that is new, so nothing is sent. The real
corpus, derived one event at a time, then re-derived from several points of its time span
through the management command."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db.models import Max, Min

from catalog.models import DatasetChange, NotifiedChange, WebhookDelivery, WebhookSubscription
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.helpers import canonical_dump, corpus_records, store

pytestmark = pytest.mark.django_db


def changes() -> list[tuple[object, ...]]:
    return sorted(
        DatasetChange.objects.values_list(
            "kind", "column", "old_type", "new_type", "changed_at", "run_id", "previous_run_id"
        )
    )


def test_rederive_since_any_point_changes_nothing_and_sends_nothing(corpus: object) -> None:
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/all")
    for stored in store(corpus_records()):
        derive_events([stored])
    before, listed = canonical_dump(), changes()
    keys, sent = NotifiedChange.objects.count(), WebhookDelivery.objects.count()
    assert listed and sent  # the corpus makes changes, and they were enqueued
    span = Event.objects.aggregate(first=Min("event_time"), last=Max("event_time"))
    first, last = span["first"], span["last"]
    length = last - first
    for since in (first, first + length / 3, first + 2 * length / 3, last + timedelta(0)):
        call_command("rederive", since=since.isoformat(), verbosity=0)
        assert not Event.objects.filter(derivation_status="pending").exists()
        assert canonical_dump() == before, since
        assert changes() == listed, since
        assert (NotifiedChange.objects.count(), WebhookDelivery.objects.count()) == (keys, sent)

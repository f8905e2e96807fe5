"""docs/notifications.md, "Operating it" and "Subscribing": with the broker down when
derivation commits, nothing is lost (the outbox is in PostgreSQL) and the sweep sends what
the lost task would have, once, and only deliveries due for SWEEP_AFTER_SECONDS; two sweeps
at once never try the same delivery; an inactive subscription gets nothing enqueued, and
what was queued for it before is not sent while it stays inactive."""

import threading
from datetime import timedelta
from typing import Any

import pytest
from celery import current_app
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, load
from tests.notify.receivers import receiver


def due_since(seconds: float) -> None:
    WebhookDelivery.objects.update(next_attempt_at=timezone.now() - timedelta(seconds=seconds))


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_the_sweep_sends_every_delivery_once_when_it_is_due(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app, "send_task", broker_down)
    with receiver() as hook:
        WebhookSubscription.objects.create(name="down", url=hook.url)
        derive(load(V1, 0, 0), load(V2, 100, 1))  # three changes, committed; no task sent
        ids = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)}
        assert len(ids) == 3
        assert delivery.sweep() == 0  # due for less than SWEEP_AFTER_SECONDS: its task may run
        due_since(11)
        assert delivery.sweep() == 3
        assert delivery.sweep(older_than_seconds=0) == 0  # none twice
        received = hook.ids()
    assert sorted(received) == sorted(ids)
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_two_sweeps_at_once_never_try_the_same_delivery(allow_loopback: None) -> None:
    with receiver("slow", delay=0.1) as hook:
        subscription = WebhookSubscription.objects.create(name="two sweeps", url=hook.url)
        for _ in range(12):
            delivery.test_send(subscription)
        due_since(60)
        tried: list[int] = []

        def sweep() -> None:
            try:
                tried.append(delivery.sweep())
            finally:
                connection.close()

        threads = [threading.Thread(target=sweep) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        received = hook.ids()
    assert sum(tried) == 12 and min(tried) > 0, tried  # both sent, together all, each once
    assert len(received) == len(set(received)) == 12
    assert set(WebhookDelivery.objects.values_list("attempts", flat=True)) == {1}


@pytest.mark.django_db(transaction=True)
def test_an_inactive_subscription_gets_nothing_enqueued_or_sent(allow_loopback: None) -> None:
    with receiver() as hook:
        active = WebhookSubscription.objects.create(name="active", url=hook.url)
        WebhookSubscription.objects.create(name="inactive", url=hook.url, active=False)
        derive(load(V1, 0, 0), load(V2, 100, 1))
        assert set(WebhookDelivery.objects.values_list("subscription__name", flat=True)) == {
            "active"
        }
        queued = list(WebhookDelivery.objects.values_list("id", flat=True))
        WebhookSubscription.objects.filter(id=active.id).update(active=False)
        due_since(60)
        assert delivery.deliver_many([str(pk) for pk in queued]) == dict.fromkeys(map(str, queued))
        assert delivery.sweep(older_than_seconds=0) == 0
        assert hook.received == []
        WebhookSubscription.objects.filter(id=active.id).update(active=True)  # ticked again
        assert delivery.sweep(older_than_seconds=0) == len(queued)
        assert sorted(hook.ids()) == sorted(map(str, queued))
    assert {WebhookDelivery.objects.get(id=pk).status for pk in queued} == {
        DeliveryStatus.DELIVERED
    }


@pytest.mark.django_db
def test_a_sweep_starts_no_try_past_its_budget_nor_more_than_its_batch(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """delivery.sweep's bounds: no try starts once ``budget`` is spent, and at most
    ``SWEEP_BATCH`` a sweep (the next beat's sweep goes on)."""
    monkeypatch.setattr(delivery, "SWEEP_BATCH", 2)
    with receiver() as hook:
        subscription = WebhookSubscription.objects.create(name="bounded", url=hook.url)
        for _ in range(3):
            delivery.test_send(subscription)
        due_since(60)
        assert delivery.sweep(budget=0) == 0
        assert delivery.sweep() == 2
        assert delivery.sweep() == 1
        assert len(hook.ids()) == 3

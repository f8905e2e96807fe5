"""catalog/notify/delivery.py's promises about a try in flight (ADR 0200): "the outcome is
written only where the row still holds that token, so a worker whose lease ran out (it
hung ...) cannot record anything over the try that replaced it", and ``deliver_many``: "a
second task for the same ids ... sends none of them twice" (catalog/tasks.py: "a second
task for the same ids finds them claimed or done"). Both with the tries really in flight,
in threads of their own, against a real receiver."""

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.notify.receivers import receiver


def _in_thread(call: Callable[[], Any], answers: dict[str, Any], name: str) -> threading.Thread:
    def target() -> None:
        try:
            answers[name] = call()
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    return thread


def _until(condition: Callable[[], bool], what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_a_try_that_outlived_its_lease_records_nothing_over_the_try_that_replaced_it(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    # The hung try waits 1.5 s for its answer, well within its limits: only its lease is short.
    settings.WEBHOOKS = {**settings.WEBHOOKS, "READ_TIMEOUT_SECONDS": 5, "ANSWER_SECONDS": 5}
    lease = 0.3
    monkeypatch.setattr(delivery, "lease_seconds", lambda: lease)
    answers: dict[str, Any] = {}
    with receiver("slow", delay=1.5) as hook:
        subscription = WebhookSubscription.objects.create(name="hung", url=hook.url)
        sent = delivery.test_send(subscription)
        # The first worker's try: claimed, then its POST hangs on the receiver past its lease.
        hung = _in_thread(lambda: delivery.deliver(str(sent.id)), answers, "hung")
        _until(lambda: len(hook.received) == 1, "the first POST")
        time.sleep(lease)  # its lease has run out: the sweep finds the delivery due again
        replacing = delivery._claim(delivery.timezone.now())  # the sweep's claim
        assert replacing is not None and replacing.delivery.pk == sent.pk
        hook.mode = "ok"
        hung.join(20)
        # The hung try's answer came back while the sweep's try holds the row.
        assert answers["hung"] == "superseded"
        held = WebhookDelivery.objects.get(pk=sent.pk)
        assert (held.status, held.claim, held.attempts) == (
            DeliveryStatus.PENDING,
            replacing.token,
            2,
        )
        assert delivery._send(replacing) == DeliveryStatus.DELIVERED
        seen = hook.ids()
    assert seen == [str(sent.pk)] * 2  # at least once, by design: both tries were POSTed
    done = WebhookDelivery.objects.get(pk=sent.pk)
    assert (done.status, done.claim, done.attempts) == (DeliveryStatus.DELIVERED, None, 2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_two_tasks_for_the_same_ids_at_once_send_each_delivery_once(
    allow_loopback: None, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "POOL_SIZE": 4, "PER_HOST": 4}
    answers: dict[str, Any] = {}
    with receiver("slow", delay=0.25) as hook:
        subscription = WebhookSubscription.objects.create(name="twice", url=hook.url)
        ids = [str(delivery.test_send(subscription).pk) for _ in range(4)]
        first = _in_thread(lambda: delivery.deliver_many(ids), answers, "first")
        # The second task (a redelivered message, a task sent twice) while the first's
        # POSTs are in flight: every delivery is claimed, none is sent again.
        _until(lambda: len(hook.received) >= 1, "the first task's POSTs")
        second = _in_thread(lambda: delivery.deliver_many(ids), answers, "second")
        first.join(20)
        second.join(20)
        seen = hook.ids()
    assert sorted(seen) == sorted(ids)  # each once
    delivered = {delivery_id: DeliveryStatus.DELIVERED for delivery_id in ids}
    assert {**answers["first"], **{k: v for k, v in answers["second"].items() if v}} == delivered
    assert set(answers["second"].values()) <= {None, DeliveryStatus.DELIVERED}
    assert set(WebhookDelivery.objects.values_list("attempts", flat=True)) == {1}

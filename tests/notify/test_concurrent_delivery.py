"""Issue 40 item 4 (latency): a derive commit's deliveries go out as one task, on a queue of
their own, and are sent concurrently with a bounded pool, at most PER_HOST at once to one
receiver; each is still claimed, leased and fenced on its own (ADR 0086), so running the
task twice sends nothing twice."""

from typing import Any

import pytest
from celery import current_app
from django.conf import settings
from django.db import OperationalError

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery, outbox
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, load
from tests.notify.receivers import receiver


@pytest.mark.django_db(transaction=True)
def test_a_commits_deliveries_are_sent_concurrently_bounded_per_host(
    allow_loopback: None, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "POOL_SIZE": 8, "PER_HOST": 2}
    with receiver("slow", delay=0.3) as crowded, receiver("slow", delay=0.3) as other:
        for number in range(3):
            WebhookSubscription.objects.create(name=f"crowded {number}", url=crowded.url)
        WebhookSubscription.objects.create(name="other", url=other.url)
        derive(load(V1, 0, 0), load(V2, 100, 1))  # three changes, four subscriptions
        ids = [str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)]
        assert len(ids) == 12
        answer = delivery.deliver_many(ids)
        assert answer == {delivery_id: DeliveryStatus.DELIVERED for delivery_id in ids}
        # The same task again (a redelivered message): nothing is due, nothing is sent.
        assert set(delivery.deliver_many(ids).values()) == {None}
        got = crowded.ids() + other.ids()
        peaks = (crowded.peak, other.peak)
    assert sorted(got) == sorted(ids)  # each once
    assert len(crowded.ids()) == 9 and len(other.ids()) == 3
    # Nine POSTs to one receiver, never more than two at once, and more than one: the pool
    # sent them together, and the other receiver was not made to wait behind them.
    assert peaks == (2, 2)
    assert set(WebhookDelivery.objects.values_list("attempts", flat=True)) == {1}


@pytest.mark.django_db(transaction=True)
def test_a_url_without_its_default_port_is_the_same_receiver_for_the_bound(
    allow_loopback: None, settings: Any
) -> None:
    """ "at most PER_HOST to one receiver (host and port)": http://h/ is http://h:80/."""
    settings.WEBHOOKS = {**settings.WEBHOOKS, "POOL_SIZE": 8, "PER_HOST": 2}
    try:
        hook = receiver("slow", delay=0.3, port=80)
        crowded = hook.__enter__()
    except OSError as error:  # port 80 taken, or not ours to bind
        pytest.skip(f"cannot listen on port 80: {error}")
    try:
        for number, url in enumerate(["http://127.0.0.1/hook", "http://127.0.0.1:80/hook"] * 2):
            subscription = WebhookSubscription.objects.create(name=f"s{number}", url=url)
            delivery.test_send(subscription)
        ids = [str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)]
        answer = delivery.deliver_many(ids)
    finally:
        hook.__exit__(None, None, None)
    assert answer == dict.fromkeys(ids, DeliveryStatus.DELIVERED)
    assert len(crowded.ids()) == 4 and crowded.peak == 2  # not 2 per spelling of the URL


@pytest.mark.django_db(transaction=True)
def test_a_derive_commit_publishes_one_task_for_its_deliveries_on_the_webhooks_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args, **options: sent.append((name, args))
    )
    for number in range(2):
        WebhookSubscription.objects.create(name=f"team {number}", url="http://127.0.0.1:9/")
    derive(load(V1, 0, 0))
    assert [name for name, _ in sent if name != "catalog.derive_events"] == []  # no change yet
    derive(load(V2, 100, 1))  # three changes, two subscriptions: one commit
    ids = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)}
    assert len(ids) == 6
    ((published,),) = [args for name, args in sent if name == outbox.DELIVER_TASK]
    assert set(published) == ids
    route = current_app.amqp.router.route({}, outbox.DELIVER_TASK)
    assert route["queue"].name == "webhooks"
    assert current_app.amqp.router.route({}, "catalog.derive_events")["queue"].name == (
        settings.CELERY_TASK_DEFAULT_QUEUE
    )


@pytest.mark.django_db(transaction=True)
def test_a_transient_error_of_one_try_is_raised_after_the_others_finished(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """deliver_many: one try's database error does not stop the commit's other tries; it
    is raised once they are done, for the task to retry (the tries done are not due)."""
    with receiver() as hook:
        subscription = WebhookSubscription.objects.create(name="one lost", url=hook.url)
        lost, sent = delivery.test_send(subscription), delivery.test_send(subscription)
        send = delivery._send

        def lose_one(claimed: delivery.Claimed) -> str:
            if claimed.delivery.pk == lost.pk:
                raise OperationalError("server closed the connection unexpectedly")
            return send(claimed)

        monkeypatch.setattr(delivery, "_send", lose_one)
        with pytest.raises(OperationalError):
            delivery.deliver_many([str(lost.pk), str(sent.pk)])
        received = hook.ids()
    assert received == [str(sent.pk)]
    assert WebhookDelivery.objects.get(pk=sent.pk).status == DeliveryStatus.DELIVERED

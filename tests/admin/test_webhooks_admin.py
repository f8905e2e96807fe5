"""Issue 40 item 4: stewards manage webhook subscriptions and read and replay the delivery
log in the admin (ADR 0086): a private URL refused unless the operator allows it, the
secret shown once, a test delivery and a replay through the same outbox."""

from typing import Any

import pytest
from django.test import Client

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.notify.conftest import FAST

pytestmark = pytest.mark.django_db
ADD = "/admin/catalog/webhooksubscription/add/"
LOG = "/admin/catalog/webhookdelivery/"


def form(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "orders team",
        "url": url,
        "active": "on",
        "kinds": ["column_removed", "type_changed"],
        "namespaces": "",
        "datasets": "postgres://db:5432 public.orders",
        "downstream_of": "",
        "downstream_depth": "5",
        **extra,
    }


def test_a_loopback_url_is_refused_unless_allowed(steward_client: Client, settings: Any) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": False, "ALLOWED_NETWORKS": []}
    response = steward_client.post(ADD, form("http://127.0.0.1:8080/hook"))
    assert response.status_code == 200 and b"loopback address" in response.content
    assert not WebhookSubscription.objects.exists()
    response = steward_client.post(ADD, form("http://127.0.0.1:8080/hook", datasets="oops"))
    assert b"write the namespace, a blank, the name" in response.content


def test_a_steward_adds_a_subscription_sees_its_secret_once_and_sends_a_test(
    steward_client: Client, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    response = steward_client.post(ADD, form("http://127.0.0.1:8080/hook"), follow=True)
    subscription = WebhookSubscription.objects.get()
    assert subscription.secret.startswith("whsec_")
    assert subscription.secret in response.content.decode()  # shown once, on its page
    assert subscription.datasets == [["postgres://db:5432", "public.orders"]]
    assert subscription.kinds == ["column_removed", "type_changed"]
    page = steward_client.get(f"/admin/catalog/webhooksubscription/{subscription.pk}/change/")
    assert page.status_code == 200 and subscription.secret not in page.content.decode()
    steward_client.post(
        "/admin/catalog/webhooksubscription/",
        {"action": "send_test", "_selected_action": [subscription.pk]},
    )
    ping = WebhookDelivery.objects.get()
    assert ping.kind == "ping" and ping.payload["id"] == str(ping.id)


def test_the_delivery_log_shows_what_was_sent_and_replays(
    steward_client: Client, reader_client: Client, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    subscription = WebhookSubscription.objects.create(name="down", url="http://127.0.0.1:9/")
    sent = delivery.test_send(subscription)
    for _ in range(3):
        delivery.deliver(str(sent.id))  # nothing listens on port 9: dead after 3 tries
    sent.refresh_from_db()
    assert sent.status == DeliveryStatus.DEAD
    listing = steward_client.get(LOG, {"status": "dead"})
    assert listing.status_code == 200 and str(sent.id) in listing.content.decode()
    assert steward_client.get(LOG, {"q": "not-a-uuid"}).status_code == 200
    page = steward_client.get(f"{LOG}{sent.id}/change/").content.decode()
    assert "A test delivery from the Lineage Catalog." in page and "ConnectionRefused" in page
    # Readers look, they do not replay.
    assert b'value="replay"' not in reader_client.get(LOG).content
    reader_client.post(LOG, {"action": "replay", "_selected_action": [str(sent.id)]})
    sent.refresh_from_db()
    assert sent.status == DeliveryStatus.DEAD
    steward_client.post(LOG, {"action": "replay", "_selected_action": [str(sent.id)]})
    sent.refresh_from_db()
    assert (sent.status, sent.attempts) == (DeliveryStatus.PENDING, 0)


def test_readers_never_see_a_receiver_url_in_the_delivery_log(
    steward_client: Client, reader_client: Client, settings: Any
) -> None:
    """docs/admin.md: readers see the delivery log, only stewards see subscriptions, because
    receiver URLs often carry credentials. A receiver that echoes its path (a framework's
    404 page, a login redirect) must not hand the URL's secret to readers through the
    answer or the error kept on the delivery."""
    from tests.notify.receivers import receiver

    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    with receiver("echo") as hook:
        url = f"http://127.0.0.1:{hook.port}/hooks/T0001/s3cr3tPathToken?sig=qs3cr3tValue"
        subscription = WebhookSubscription.objects.create(name="echoing", url=url)
        sent = [delivery.test_send(subscription), delivery.test_send(subscription)]
        for each in sent:
            delivery.deliver(str(each.id))
    assert {WebhookDelivery.objects.get(pk=each.pk).last_status_code for each in sent} == {302, 404}
    pages = [LOG, *(f"{LOG}{each.id}/change/" for each in sent)]
    for page in pages:
        shown = reader_client.get(page)
        assert shown.status_code == 200
        assert b"s3cr3tPathToken" not in shown.content and b"qs3cr3tValue" not in shown.content
    # A steward, who may see the subscription, still reads what the receiver answered.
    assert b"s3cr3tPathToken" in steward_client.get(pages[1]).content


def test_a_rotated_secret_signs_at_once_even_a_delivery_already_waiting(
    steward_client: Client, settings: Any
) -> None:
    """docs/admin.md: rotating makes a new secret, shown once; the old one stops working at
    once, for what was already waiting to be sent too."""
    from tests.api.project_fixtures import derive
    from tests.api.test_changes import V1, V2, load
    from tests.notify.receivers import receiver, signature_ok

    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    with receiver() as hook:
        subscription = WebhookSubscription.objects.create(
            name="rotating", url=hook.url, kinds=["column_removed"]
        )
        old = subscription.secret
        derive(load(V1, 0, 0), load(V2, 100, 1))
        (waiting,) = WebhookDelivery.objects.all()
        page = steward_client.post(
            "/admin/catalog/webhooksubscription/",
            {"action": "rotate_secret", "_selected_action": [subscription.pk]},
            follow=True,
        ).content.decode()
        subscription.refresh_from_db()
        assert subscription.secret != old and subscription.secret in page
        assert delivery.deliver(str(waiting.id)) == DeliveryStatus.DELIVERED
        (got,) = hook.received
    assert signature_ok(subscription.secret, got.headers, got.body)
    assert not signature_ok(old, got.headers, got.body)
    change = f"/admin/catalog/webhooksubscription/{subscription.pk}/change/"
    assert subscription.secret not in steward_client.get(change).content.decode()


def test_a_paused_subscription_gets_nothing_meanwhile(
    steward_client: Client, settings: Any
) -> None:
    """docs/admin.md: untick *active* to pause a subscription: nothing is enqueued for it
    meanwhile (and what was waiting is not sent)."""
    from tests.api.project_fixtures import derive
    from tests.api.test_changes import V1, V2, load
    from tests.notify.receivers import receiver

    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    with receiver() as hook:
        steward_client.post(ADD, form(hook.url, kinds=[], datasets=""))
        subscription = WebhookSubscription.objects.get()
        waiting = delivery.test_send(subscription)
        change = f"/admin/catalog/webhooksubscription/{subscription.pk}/change/"
        paused = {**form(hook.url, kinds=[], datasets=""), "active": ""}
        assert steward_client.post(change, paused).status_code == 302
        subscription.refresh_from_db()
        assert subscription.active is False
        derive(load(V1, 0, 0), load(V2, 100, 1))  # three changes, every kind
        assert list(WebhookDelivery.objects.values_list("id", flat=True)) == [waiting.id]
        assert delivery.deliver(str(waiting.id)) is None
        assert hook.received == []


def test_rotating_more_secrets_than_an_action_does_at_once_rotates_none_and_says_so(
    steward_client: Client,
) -> None:
    """docs/admin.md: *Rotate the signing secret* makes a new one and the old one stops
    working at once. The action rotated the first 20 selected and said nothing of the rest:
    a steward rotating every secret after a leak left the 21st signing with the leaked one.
    Over the bound it now rotates none and says why; at the bound it rotates all."""
    from catalog.admin.webhooks import MAX_AT_ONCE

    subscriptions = [
        WebhookSubscription.objects.create(name=f"receiver {n}", url=f"https://h{n}.example/")
        for n in range(MAX_AT_ONCE + 1)
    ]
    before = {s.pk: s.secret for s in subscriptions}
    page = steward_client.post(
        "/admin/catalog/webhooksubscription/",
        {"action": "rotate_secret", "_selected_action": [s.pk for s in subscriptions]},
        follow=True,
    ).content.decode()
    assert f"Select at most {MAX_AT_ONCE} subscriptions" in page
    assert dict(WebhookSubscription.objects.values_list("pk", "secret")) == before
    assert not WebhookDelivery.objects.exists()
    steward_client.post(
        "/admin/catalog/webhooksubscription/",
        {"action": "send_test", "_selected_action": [s.pk for s in subscriptions]},
    )
    assert not WebhookDelivery.objects.exists()
    chosen = [s.pk for s in subscriptions[:MAX_AT_ONCE]]
    page = steward_client.post(
        "/admin/catalog/webhooksubscription/",
        {"action": "rotate_secret", "_selected_action": chosen},
        follow=True,
    ).content.decode()
    after = dict(WebhookSubscription.objects.values_list("pk", "secret"))
    assert all(after[pk] != before[pk] and after[pk] in page for pk in chosen)


def test_a_replay_of_more_than_it_queues_at_once_says_what_it_left(
    steward_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/admin.md: *Replay* sends the selected deliveries again. It queued the first 500
    and said nothing of the rest; now it says so, and the rest is replayed next time."""
    from catalog.admin import webhooks as webhook_admin

    monkeypatch.setattr(webhook_admin, "MAX_REPLAY", 2)  # 501 deliveries are not worth it here
    subscription = WebhookSubscription.objects.create(name="down", url="https://h.example/")
    sent = [delivery.test_send(subscription) for _ in range(3)]
    WebhookDelivery.objects.update(status=DeliveryStatus.DEAD, attempts=3)
    page = steward_client.post(
        LOG, {"action": "replay", "_selected_action": [str(s.id) for s in sent]}, follow=True
    ).content.decode()
    assert "2 deliveries queued again" in page
    assert "Only the first 2 selected were replayed" in page
    statuses = sorted(WebhookDelivery.objects.values_list("status", flat=True))
    assert statuses == sorted([DeliveryStatus.PENDING] * 2 + [DeliveryStatus.DEAD])

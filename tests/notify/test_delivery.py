"""Issue 40 item 4: webhook notifications of new changes, end to end: events derived into
changes, the outbox written in the derive transaction, each delivery POSTed to a real HTTP
receiver started by the test (ok, slow, failing, down, redirecting, answering too much),
signed, retried, dead after N tries, replayed under the same id (ADR 0086)."""

import orjson
import pytest

from catalog.models import DeliveryStatus, NotifiedChange, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery, outbox
from catalog.services.derive import rederive
from tests.api.project_fixtures import derive
from tests.api.test_changes import NS, V1, V2, load, reads
from tests.notify.receivers import receiver, signature_ok

pytestmark = pytest.mark.django_db


def subscribe(url: str, **scope: object) -> WebhookSubscription:
    return WebhookSubscription.objects.create(name=f"team {url} {scope}", url=url, **scope)


def only_delivery() -> WebhookDelivery:
    (found,) = WebhookDelivery.objects.all()
    return found


def test_a_new_change_is_delivered_signed_once_and_a_rederive_enqueues_nothing(
    allow_loopback: None,
) -> None:
    with receiver() as hook:
        subscription = subscribe(hook.url, kinds=["column_removed"])
        derive(load(V1, 0, 0))
        assert not WebhookDelivery.objects.exists()  # one version: no change yet
        derive(load(V2, 100, 1))  # note removed (amount retyped, currency added: not asked)
        sent = only_delivery()
        assert sent.status == DeliveryStatus.PENDING and sent.kind == "column_removed"
        assert delivery.deliver(str(sent.id)) == DeliveryStatus.DELIVERED
        assert delivery.deliver(str(sent.id)) is None  # a second task: nothing to do
        (got,) = hook.received
    assert got.headers["Webhook-Id"] == str(sent.id)
    assert signature_ok(subscription.secret, got.headers, got.body)
    assert not signature_ok("another secret", got.headers, got.body)
    body = orjson.loads(got.body)
    assert body["id"] == str(sent.id) and body["type"] == "dataset.change"
    assert body["data"]["kind"] == "column_removed" and body["data"]["column"] == "note"
    assert (body["data"]["namespace"], body["data"]["name"]) == (NS, "orders")
    sent.refresh_from_db()
    assert (sent.status, sent.attempts, sent.last_status_code) == ("delivered", 1, 200)
    assert sent.response_excerpt == '{"ok": true}'
    # Every change row is re-created by a rederive: none of them is new.
    keys = NotifiedChange.objects.count()
    rederive()
    derive(load(V2, 300, 2))  # the same schema again: nothing new either
    assert NotifiedChange.objects.count() == keys == 3
    assert WebhookDelivery.objects.count() == 1


def test_enqueue_twice_writes_one_delivery_per_subscription(allow_loopback: None) -> None:
    subscribe("http://127.0.0.1:9/a")
    subscribe("http://127.0.0.1:9/b", namespaces=[NS])
    subscribe("http://127.0.0.1:9/c", namespaces=["kafka://elsewhere:9092"])
    derive(load(V1, 0, 0), load(V2, 100, 1))
    assert WebhookDelivery.objects.count() == 2 * 3  # 3 changes, 2 subscriptions in scope
    from catalog.models import DatasetChange

    assert outbox.enqueue(list(DatasetChange.objects.all())) == 0  # seen: nothing new
    assert WebhookDelivery.objects.count() == 6


def test_scope_by_dataset_and_downstream_and_breaking_only(allow_loopback: None) -> None:
    by_name = subscribe("http://127.0.0.1:9/name", datasets=[[NS, "orders"]])
    other = subscribe("http://127.0.0.1:9/other", datasets=[[NS, "customers"]])
    below = subscribe("http://127.0.0.1:9/below", downstream_of=[[NS, "orders"]])
    under_build = subscribe("http://127.0.0.1:9/under", downstream_of=[[NS, "build_out"]])
    breaking = subscribe("http://127.0.0.1:9/breaking", breaking_only=True)
    derive(load(V1, 0, 0), reads(("etl", "build"), 50, 10, total="amount"))
    derive(load(V2, 100, 1))
    counts = {
        subscription.name: WebhookDelivery.objects.filter(subscription=subscription).count()
        for subscription in (by_name, other, below, under_build, breaking)
    }
    assert counts == {by_name.name: 3, other.name: 0, below.name: 3, under_build.name: 0,
                      breaking.name: 1}  # fmt: skip
    (retyped,) = WebhookDelivery.objects.filter(subscription=breaking)
    assert retyped.payload["data"]["breaking"] and retyped.payload["data"]["column"] == "amount"
    assert retyped.payload["data"]["breaks"][0]["field"] == "total"


def test_a_failing_receiver_is_retried_then_dead_and_a_replay_sends_the_same_id(
    allow_loopback: None,
) -> None:
    with receiver("fail") as hook:
        subscribe(hook.url)
        sent = delivery.test_send(WebhookSubscription.objects.get())
        for attempt in range(1, 4):
            status = delivery.deliver(str(sent.id))
            assert status == ("dead" if attempt == 3 else "failed")
        sent.refresh_from_db()
        assert (sent.attempts, sent.last_status_code, sent.last_error) == (3, 500, "HTTP 500")
        assert delivery.deliver(str(sent.id)) is None  # dead: no more tries
        hook.mode = "ok"
        assert delivery.replay([str(sent.id)]) == 1
        assert delivery.deliver(str(sent.id)) == "delivered"
        assert hook.ids() == [str(sent.id)] * 4


def test_a_slow_receiver_times_out_and_is_retried(allow_loopback: None) -> None:
    with receiver("slow", delay=1.5) as hook:
        subscribe(hook.url)
        sent = delivery.test_send(WebhookSubscription.objects.get())
        assert delivery.deliver(str(sent.id)) == "failed"
        sent.refresh_from_db()
        assert sent.last_status_code is None and "timed out" in sent.last_error.lower()
        hook.mode = "ok"
        assert delivery.deliver(str(sent.id)) == "delivered"
        assert hook.ids() == [str(sent.id)] * 2


def test_a_receiver_that_is_down_is_a_failed_try(allow_loopback: None) -> None:
    with receiver() as hook:
        url = hook.url
    subscribe(url)  # its port is closed now: connection refused
    sent = delivery.test_send(WebhookSubscription.objects.get())
    assert delivery.deliver(str(sent.id)) == "failed"
    sent.refresh_from_db()
    assert sent.last_error.startswith("connect: ConnectionRefusedError")


def test_a_redirect_is_not_followed(allow_loopback: None) -> None:
    with receiver("redirect") as hook:
        subscribe(hook.url)
        sent = delivery.test_send(WebhookSubscription.objects.get())
        assert delivery.deliver(str(sent.id)) == "failed"
        assert [item.path for item in hook.received] == ["/hook"]  # never /elsewhere
    sent.refresh_from_db()
    assert sent.last_status_code == 307 and "not followed" in sent.last_error


def test_an_answer_is_read_bounded(allow_loopback: None) -> None:
    with receiver("huge") as hook:  # answers 1 MiB
        subscribe(hook.url)
        sent = delivery.test_send(WebhookSubscription.objects.get())
        assert delivery.deliver(str(sent.id)) == "delivered"
    sent.refresh_from_db()
    assert len(sent.response_excerpt) == 1024  # MAX_ANSWER_BYTES in the tests' settings


def test_private_addresses_are_refused_without_the_operator_allowing_them(
    refuse_private: None,
) -> None:
    from catalog.notify import addresses

    for url in (
        "http://127.0.0.1:8000/x",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://169.254.169.254/latest/meta-data",
        "http://10.1.2.3/x",
        "http://[fe80::1]/x",
        "http://224.0.0.1/x",
        "http://0.0.0.0/x",
        "http://localhost/x",
        "ftp://example.com/x",
        "http://user:pw@example.com/x",
    ):
        with pytest.raises(addresses.RefusedAddress):
            addresses.resolve(url)
    # A subscription saved while it was allowed (or whose name now resolves to loopback:
    # DNS rebinding) is refused at send time, and the receiver never sees a byte.
    with receiver() as hook:
        subscribe(hook.url)
        sent = delivery.test_send(WebhookSubscription.objects.get())
        assert delivery.deliver(str(sent.id)) == "failed"
        assert hook.received == []
    sent.refresh_from_db()
    assert sent.last_error.startswith("refused: ") and "loopback" in sent.last_error


def test_an_allowed_network_lets_only_that_network_in(
    settings: object, refuse_private: None
) -> None:
    from catalog.notify import addresses

    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_NETWORKS": ["127.0.0.0/8"]}  # type: ignore[attr-defined]
    assert addresses.resolve("http://127.0.0.1:8000/x").address == "127.0.0.1"
    with pytest.raises(addresses.RefusedAddress):
        addresses.resolve("http://10.0.0.1/x")

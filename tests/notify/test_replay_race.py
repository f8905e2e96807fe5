"""docs/notifications.md: a steward's replay sends a delivery again, but "one being tried now
is left to its try", and "two workers never try the same delivery at once". The race: a
retry task claims a failed delivery at the moment a steward replays it. The test holds the
task's real claim transaction open after it locked the row (its claim token is drawn
there), runs the replay meanwhile on another connection, then lets the claim commit. The
replay must see the claim and leave the delivery to it; the try in flight records its own
outcome (not "superseded" by a reset it never saw), and no second try is made ready."""

import threading
import time
import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.notify.receivers import receiver


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(60)
def test_a_replay_racing_a_claim_leaves_the_delivery_to_the_try_in_flight(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked, go = threading.Event(), threading.Event()

    def claim_token_after_a_pause() -> uuid.UUID:
        locked.set()  # the claim transaction holds the row now
        assert go.wait(20)
        return uuid.uuid4()

    answers: dict[str, Any] = {}

    def run(name: str, call: Any) -> threading.Thread:
        def target() -> None:
            try:
                answers[name] = call()
            finally:
                from django.db import connection

                connection.close()

        thread = threading.Thread(target=target)
        thread.start()
        return thread

    with receiver("slow", delay=0.3) as hook:
        subscription = WebhookSubscription.objects.create(name="race", url=hook.url)
        sent = delivery.test_send(subscription)
        WebhookDelivery.objects.filter(id=sent.id).update(status=DeliveryStatus.FAILED)
        monkeypatch.setattr(
            delivery, "uuid", SimpleNamespace(uuid4=claim_token_after_a_pause, UUID=uuid.UUID)
        )
        trying = run("try", lambda: delivery.deliver(str(sent.id)))
        assert locked.wait(20)
        replaying = run("replay", lambda: delivery.replay([str(sent.id)]))
        time.sleep(0.5)  # the replay reaches the row while the claim holds it
        go.set()
        trying.join(30)
        replaying.join(30)
        received = hook.ids()
    assert answers == {"try": DeliveryStatus.DELIVERED, "replay": 0}
    assert received == [str(sent.id)]
    sent.refresh_from_db()
    assert (sent.status, sent.attempts, sent.claim) == (DeliveryStatus.DELIVERED, 1, None)

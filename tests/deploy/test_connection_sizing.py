"""docs/deploy.md, "Scale": the PostgreSQL connections each process holds, which the text's
sizing sum counts. The webhook sender is the one that holds more than one per task thread:
a task sending a derive commit's deliveries tries them on a pool of up to
``LINEAGE_WEBHOOK_POOL_SIZE`` threads, each claiming its delivery on a connection of its
own and keeping it while it sends, beside the task thread's own: a sender pod holds up to
``webhooks.concurrency x (1 + LINEAGE_WEBHOOK_POOL_SIZE)``."""

import threading
import time
from contextlib import ExitStack
from typing import Any

import pytest
from django.db import connection, connections

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.notify.receivers import receiver

POOL_SIZE = 8


def backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_a_webhook_task_holds_a_connection_for_each_delivery_it_sends_at_once(
    settings: Any,
) -> None:
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "ALLOW_PRIVATE": True,
        "POOL_SIZE": POOL_SIZE,
        "PER_HOST": 4,
    }
    with ExitStack() as stack:
        # More receivers than the pool, each slow to answer: the pool is full while they wait.
        hooks = [stack.enter_context(receiver("slow", delay=1.0)) for _ in range(POOL_SIZE + 2)]
        for number, hook in enumerate(hooks):
            subscription = WebhookSubscription.objects.create(name=f"s{number}", url=hook.url)
            delivery.test_send(subscription)
        ids = [str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)]
        before = backends()
        answers: list[dict[str, str | None]] = []

        def task() -> None:  # as a thread of the sender's pool runs the task
            try:
                answers.append(delivery.deliver_many(ids))
            finally:
                connections.close_all()

        sender = threading.Thread(target=task)
        sender.start()
        peak = 0
        while sender.is_alive():
            peak = max(peak, backends() - before)
            time.sleep(0.05)
        sender.join()
    assert answers == [dict.fromkeys(ids, DeliveryStatus.DELIVERED)]
    # The task's own connection (it reads the receivers) and one per pool thread.
    assert peak == 1 + POOL_SIZE, peak
    assert backends() == before  # each pool thread closed its connection when it ended

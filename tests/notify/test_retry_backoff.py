"""docs/notifications.md, "Retries back off exponentially with jitter ... After
LINEAGE_WEBHOOK_MAX_ATTEMPTS tries the delivery is dead" and "A failed try's retry is a task
of its own, queued with its backoff": a real Celery worker (real Redis broker, real
PostgreSQL) sends a test delivery to a receiver that always fails, with no scheduler running,
so every try after the first comes from the retry task its failed try queued. The receiver
sees each try under the same id, spaced by at least half of the doubling wait, and the
delivery is dead after the last try."""

import itertools
import time
from pathlib import Path

import pytest
from django.conf import settings

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.faults import processes
from tests.notify.receivers import receiver

FIRST_WAIT = 0.5  # LINEAGE_WEBHOOK_BACKOFF_SECONDS
LONGEST_WAIT = 1.0  # LINEAGE_WEBHOOK_BACKOFF_MAX_SECONDS
ATTEMPTS = 4


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(180)
def test_a_failing_receiver_is_retried_by_queued_tasks_with_a_doubling_capped_wait(
    allow_loopback: None, tmp_path: Path
) -> None:
    with receiver("fail") as hook:
        subscription = WebhookSubscription.objects.create(name="backoff", url=hook.url)
        env = processes.service_env(processes.current_database_url(), settings.CELERY_BROKER_URL)
        env.update(
            LINEAGE_WEBHOOK_ALLOW_PRIVATE="true",
            LINEAGE_WEBHOOK_MAX_ATTEMPTS=str(ATTEMPTS),
            LINEAGE_WEBHOOK_BACKOFF_SECONDS=str(FIRST_WAIT),
            LINEAGE_WEBHOOK_BACKOFF_MAX_SECONDS=str(LONGEST_WAIT),
        )
        worker = processes.worker(env, tmp_path / "worker.log", concurrency=1)
        try:
            sent = delivery.test_send(subscription)  # its task is published on commit
            processes.wait_for(
                lambda: WebhookDelivery.objects.filter(
                    id=sent.id, status=DeliveryStatus.DEAD
                ).exists(),
                90,
                "the delivery to go dead",
            )
            time.sleep(LONGEST_WAIT * 1.5)  # a try after dead would arrive by now
        finally:
            worker.stop()
        arrived = list(hook.received)
    assert [item.headers["Webhook-Id"] for item in arrived] == [str(sent.id)] * ATTEMPTS
    stamps = [int(item.headers["Webhook-Timestamp"]) for item in arrived]
    assert stamps == sorted(stamps)  # each try signed when it was sent
    sent.refresh_from_db()
    assert (sent.status, sent.attempts, sent.last_status_code) == ("dead", ATTEMPTS, 500)
    # The arrival times, read by the receiver: the waits after tries 1, 2, 3 are drawn from
    # [d/2, d] with d = 0.5, 1, 1 (doubling from FIRST_WAIT, capped at LONGEST_WAIT).
    times = [item.arrived for item in arrived]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    for gap, wait in zip(gaps, (FIRST_WAIT, LONGEST_WAIT, LONGEST_WAIT), strict=True):
        assert wait / 2 - 0.05 <= gap, gaps
        assert gap <= wait + 3.0, gaps  # the wait, and a loaded machine's task latency

"""Issue 40 item 4: nothing is lost and no delivery is recorded delivered twice when the
worker sending it is killed with SIGKILL mid-delivery. A real Celery worker process sends
the outbox to a real receiver that answers slowly; the test kills the worker while a POST
is in flight, and the sweep (what the scheduler runs every few seconds) sends again what the
dead worker held once its lease ran out. The receiver sees every enqueued id (one of them
twice: at least once, by design), and each id is recorded delivered once."""

import re
import time
from pathlib import Path

import pytest
from django.conf import settings

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, load
from tests.faults import processes
from tests.notify.receivers import receiver

RECORDED = re.compile(
    r"webhook_delivery id=(\S+) attempt=\d+ status=delivered code=\d+ recorded=True"
)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(180)
def test_a_worker_killed_mid_delivery_loses_nothing_and_records_nothing_twice(
    allow_loopback: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="catalog.notify.delivery")
    # The receiver answers within the worker's limits (2 of 2.5 s), so only the kill ends the
    # try in flight; the dead worker's lease, 3 x 0.5 + 2.5 + 5 s, is what the sweep waits
    # out (3 x 1 + 5 + 5 s before, for a receiver taking 3 s: the same path, 4 s sooner).
    with receiver("slow", delay=2.0) as hook:
        subscription = WebhookSubscription.objects.create(name="kill", url=hook.url)
        derive(load(V1, 0, 0), load(V2, 100, 1))  # three changes: three deliveries
        for _ in range(3):
            delivery.test_send(subscription)
        enqueued = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)}
        assert len(enqueued) == 6
        env = processes.service_env(processes.current_database_url(), settings.CELERY_BROKER_URL)
        env.update(
            LINEAGE_WEBHOOK_ALLOW_PRIVATE="true",
            LINEAGE_WEBHOOK_CONNECT_TIMEOUT_SECONDS="0.5",
            LINEAGE_WEBHOOK_READ_TIMEOUT_SECONDS="2.5",
            LINEAGE_WEBHOOK_ANSWER_SECONDS="2.5",  # a lease of 3 x 0.5 + 2.5 + 5 s
        )
        worker = processes.worker(env, tmp_path / "worker.log", concurrency=1)
        try:
            processes.wait_for(lambda: len(hook.received) >= 1, 60, "the first POST", 0.01)
            worker.kill()  # SIGKILL, mid-POST: the receiver is still sleeping on it
        finally:
            worker.stop()
        hook.mode = "ok"
        in_flight = WebhookDelivery.objects.get(id=hook.ids()[0])
        assert in_flight.status == DeliveryStatus.PENDING and in_flight.claim is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            delivery.sweep(older_than_seconds=0)
            if not WebhookDelivery.objects.exclude(status=DeliveryStatus.DELIVERED).exists():
                break
            time.sleep(0.1)
        seen = hook.ids()
    assert set(seen) == enqueued  # nothing lost
    assert seen.count(in_flight.pk.__str__()) == 2  # the killed try, and the sweep's
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
    recorded = RECORDED.findall(worker.output()) + RECORDED.findall(caplog.text)
    assert sorted(recorded) == sorted(enqueued)  # each id recorded delivered exactly once

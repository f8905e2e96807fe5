"""Every Celery task of the catalog: each takes ids (the scheduled sweeps and retention: a
number or nothing), calls one service, is safe to run twice.

All follow the global acknowledgement setting (early acks, ADR 0045)."""

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from catalog.front import worker_seen
from catalog.notify import delivery
from catalog.services import derive, rederive_jobs, retention
from ingest import enqueue

# Transient database trouble (connection lost, deadlock, failover) is retried with
# backoff; bad data never raises out of the services (it is recorded on the event).
TRANSIENT = (OperationalError, InterfaceError)


@shared_task(
    name="catalog.derive_events",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=8,
)
def derive_events(event_ids: list[int]) -> int:
    """Derive ``event_ids`` (those already derived or claimed elsewhere are skipped), then
    whatever else is pending: ingest publishes no second task while this one waits
    (ADR 0053), so this one derives every event committed before it started, or, when its
    time budget (``derive.DRAIN_TIME_BUDGET_SECONDS``) ends with a full batch, sends
    another task for the rest."""
    enqueue.derive_task_started()
    worker_seen.record()
    derived = derive.derive_events(event_ids).derived
    drained, more = derive.drain_pending()
    if more:
        enqueue.publish([])  # a backlog beyond this task's time budget: another task goes on
    return derived + drained.derived


@shared_task(
    name="catalog.sweep_underived",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=3,
    ignore_result=True,
)
def sweep_underived(older_than_seconds: float = derive.SWEEP_AFTER_SECONDS) -> int:
    """Derive what the broker never delivered (Redis down, worker killed, lost message)."""
    worker_seen.record()  # every few seconds from the scheduler: an idle worker is seen too
    return derive.sweep_underived(older_than_seconds=older_than_seconds).derived


@shared_task(
    name=rederive_jobs.REDERIVE_TASK,
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    max_retries=5,
)
def rederive_job(job_id: int) -> None:
    """Run a steward's re-derive (a RederiveJob), writing its progress on the row.

    Acknowledged on receipt like every task here (CELERY_TASK_ACKS_LATE = False, ADR 0045):
    a worker killed mid-job leaves the row "running" and the events it had set pending
    again (a "since" job's all, a selection's batch in hand) pending, which the sweep
    derives; a selection's later batches keep their earlier derivation. The steward sees
    the job stalled and can ask again (tests/catalog/test_rederive_job_killed.py).
    """
    rederive_jobs.run_rederive_job(job_id)


@shared_task(
    name="catalog.apply_retention",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
    ignore_result=True,
)
def apply_retention() -> int:
    """Remove events and runs older than LINEAGE_RETENTION_DAYS, keeping their lineage
    (daily, from the scheduler). Safe to run twice: a second run finds nothing older."""
    days = settings.LINEAGE["RETENTION_DAYS"]
    if not days:
        return 0
    return retention.apply_retention(days).events


@shared_task(name="catalog.deliver_webhooks", autoretry_for=TRANSIENT, max_retries=3)
def deliver_webhooks(delivery_ids: list[str]) -> dict[str, str | None]:
    """One try of each of a derive commit's webhook deliveries that is due, sent concurrently
    (ADR 0086): a second task for the same ids finds them claimed or done and does nothing.
    A failed try's retry is a new task, sent with a countdown; the sweep sends what those
    lose. On the ``webhooks`` queue, so deliveries never wait behind derivation."""
    return delivery.deliver_many(delivery_ids)


@shared_task(name="catalog.deliver_webhook", autoretry_for=TRANSIENT, max_retries=3)
def deliver_webhook(delivery_id: str) -> str | None:
    """One delivery's try: the task before deliveries were sent a commit at a time, kept
    so that its messages still queued when a worker is upgraded are sent."""
    return delivery.deliver(delivery_id)


@shared_task(name="catalog.sweep_webhooks", autoretry_for=TRANSIENT, max_retries=3)
def sweep_webhooks() -> int:
    """Send deliveries whose task was lost (every few seconds, from the scheduler)."""
    return delivery.sweep()

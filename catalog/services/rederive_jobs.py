"""Background re-derives a steward asks for: selected events, or everything since a time.

A request is a ``RederiveJob`` row (who, when, what, and its progress) and an admin-log
entry; the Celery task ``catalog.rederive_job`` (catalog/tasks.py) takes the row's id and
calls ``run_rederive_job``. Progress lives in the row, so PostgreSQL is the only store
(ADR 0046). Running a job twice is safe: re-deriving is idempotent, progress restarts.
"""

import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from celery import current_app
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from catalog.models import RederiveJob, RederiveState
from catalog.services import derive
from catalog.services.audit import log_curation
from catalog.services.derivation.batch import BatchResult
from ingest import derivation_status

logger = logging.getLogger(__name__)

# The "re-derive selected events" action takes at most this many ids (use "since" beyond).
MAX_SELECTED_EVENTS = 10_000
REDERIVE_BATCH = 500


def rederive_event_ids(
    event_ids: Sequence[int], progress: Callable[[BatchResult], None] | None = None
) -> BatchResult:
    """Mark ``event_ids`` pending and derive them again on top of the current catalog,
    batch by batch; ``progress`` (if given) is called with the running total."""
    ids = sorted({int(event_id) for event_id in event_ids})
    total = BatchResult()
    for start in range(0, len(ids), REDERIVE_BATCH):
        chunk = ids[start : start + REDERIVE_BATCH]
        with connection.cursor() as cursor:
            derivation_status.reset_ids(cursor, chunk)
        total += derive.derive_events(chunk)
        if progress is not None:
            progress(total)
    return total


def schedule_rederive(
    user: Any,
    event_ids: Sequence[int] | None = None,
    since: datetime | None = None,
    reason: str = "",
) -> int:
    """Record the request and run it in the background after commit; returns the job id."""
    if (event_ids is None) == (since is None):
        raise ValueError("give either event ids or a since time")
    ids = sorted({int(event_id) for event_id in event_ids or []})
    if len(ids) > MAX_SELECTED_EVENTS:
        raise ValueError(f"at most {MAX_SELECTED_EVENTS} events at once; use 'since' instead")
    description = (
        f"re-derive {len(ids)} event(s)"
        if since is None
        else f"re-derive since {since:%Y-%m-%d %H:%M:%S%z}"
    )
    with transaction.atomic():  # the job, its log entry and its task, or none of them
        job = RederiveJob.objects.create(
            requested_by=user if getattr(user, "pk", None) else None,
            description=description[:200],
            reason=reason[:200],
            event_ids=ids if since is None else None,
            since=since,
            total=len(ids) if since is None else None,
        )
        log_curation(user, job, description, rederive=job.pk, reason=reason)
        transaction.on_commit(lambda: _publish(job.pk))
    return job.pk


# Sent by name: the task module imports the services, so a service never imports it
# (tests/test_import_rules.py). A signature by name runs the registered task where there is
# one (eagerly, when the settings say so) and sends it by name otherwise.
REDERIVE_TASK = "catalog.rederive_job"


def _publish(job_id: int) -> None:
    try:
        current_app.signature(REDERIVE_TASK, args=[job_id]).apply_async()
    except Exception as error:  # broker down: say so on the progress page
        logger.warning("rederive_job_publish_failed job=%d error=%s", job_id, error)
        _update(job_id, state=RederiveState.NOT_QUEUED, error=str(error)[:500])


def _update(job_id: int, **values: Any) -> None:
    # Autocommit, outside any derivation transaction: the progress page sees it at once.
    RederiveJob.objects.filter(pk=job_id).update(**values)


def _report(job_id: int) -> Callable[[BatchResult], None]:
    def report(total: BatchResult) -> None:
        _update(
            job_id,
            state=RederiveState.RUNNING,
            claimed=total.claimed,
            derived=total.derived,
            failed=total.failed,
        )

    return report


def run_rederive_job(job_id: int) -> None:
    """Run one job: its selected events, or everything since its time, reporting progress.

    Transient database errors leave it "retrying" and propagate (the task retries them);
    anything else marks it failed.
    """
    job = RederiveJob.objects.filter(pk=job_id).first()
    if job is None:
        return
    _update(job_id, state=RederiveState.RUNNING, started_at=timezone.now(), error="")
    try:
        if job.since is None:
            total = rederive_event_ids(job.event_ids or [], progress=_report(job_id))
        else:
            total = derive.rederive(since=job.since, progress=_report(job_id))
    except (OperationalError, InterfaceError):
        _mark_retrying(job_id)
        raise
    except Exception as error:
        _update(
            job_id,
            state=RederiveState.FAILED,
            finished_at=timezone.now(),
            error=f"{type(error).__name__}: {error}"[:500],
        )
        raise
    _update(
        job_id,
        state=RederiveState.DONE,
        finished_at=timezone.now(),
        claimed=total.claimed,
        derived=total.derived,
        failed=total.failed,
        total=F("total") if job.since is None else total.claimed,
    )


def _mark_retrying(job_id: int) -> None:
    """Say "retrying" on the job's row after a transient error. A connection the error
    lost is closed first, so the row is written on a new one: written on the lost one, the
    write failed too and the row stayed "running" while the task waited to retry."""
    connection.close_if_unusable_or_obsolete()
    try:
        _update(job_id, state=RederiveState.RETRYING)
    except (OperationalError, InterfaceError) as error:  # the database is away: the retry says
        logger.warning("rederive_job_state_lost job=%d error=%s", job_id, type(error).__name__)


def recent_rederives(limit: int = 20) -> list[RederiveJob]:
    """The latest re-derive jobs, newest first."""
    return list(RederiveJob.objects.select_related("requested_by").order_by("-id")[:limit])


def wait_for(job_id: int, timeout: float = 30.0) -> RederiveJob:
    """Poll a job until it is done or failed, or ``timeout`` passes (tests and scripts)."""
    deadline = time.monotonic() + timeout
    job = RederiveJob.objects.get(pk=job_id)
    while not job.finished and time.monotonic() < deadline:
        time.sleep(0.1)
        job.refresh_from_db()
    return job

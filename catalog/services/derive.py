"""Derive events, sweep the backlog, rebuild from the log: derivation's entry points.

Each owns its transactions (one short transaction per derivation batch); tasks and
commands only parse their input and call one of these.
"""

import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from django.apps import apps
from django.db import connection, transaction

from catalog.services.derivation import remembered, retained
from catalog.services.derivation.batch import (
    BATCH_SIZE,
    BatchResult,
    derive_event_ids,
    derive_pending_batch,
    derive_retained,
)
from catalog.services.derivation.retirement_changes import record_all_retirements
from ingest import derivation_status

logger = logging.getLogger(__name__)

# Events pending for longer than this are the sweep's (younger ones are in the broker).
SWEEP_AFTER_SECONDS = 5.0
# A sweep stops starting new batches after this long; the next beat tick continues.
SWEEP_TIME_BUDGET_SECONDS = 4.0
# A derive task stops starting new batches after this long (and has another task published
# if events are still pending), so a backlog never holds a worker for long in one task.
DRAIN_TIME_BUDGET_SECONDS = 2.0
# How often a rederive looks again at the events a worker's batch holds (see rederive).
HELD_POLL_SECONDS = 0.2
# Events set pending by a rederive, up to the newest then, that another transaction holds:
# once a rederive claims none, a worker may still be deriving some (claims skip locked
# rows), or one killed mid-batch whose events come free when its connection goes. Only
# those are waited for: a pending event nobody holds that the claim passed over (received
# "after" the database's now(), a clock ahead of it) is the sweep's, as before.
_STILL_HELD = f"""
SELECT EXISTS (
  SELECT FROM ingest_event WHERE derivation_status = '{derivation_status.PENDING}'
    AND id <= %(newest)s
    AND id NOT IN (
      SELECT id FROM ingest_event WHERE derivation_status = '{derivation_status.PENDING}'
        AND id <= %(newest)s FOR NO KEY UPDATE SKIP LOCKED))
"""


def derived_tables() -> list[str]:
    """Every catalog table a full rederive empties: all of the app's models but those that
    say ``kept_by_rederive`` (steward input such as alias rules). Read from the app
    registry, so a new derived model is emptied without anyone remembering to list it."""
    return [
        model._meta.db_table
        for model in apps.get_app_config("catalog").get_models(include_auto_created=True)
        if model._meta.managed and not getattr(model, "kept_by_rederive", False)
    ]


__all__ = [
    "BatchResult",
    "derive_events",
    "derived_tables",
    "drain_pending",
    "rederive",
    "sweep_underived",
]


def derive_events(event_ids: Sequence[int]) -> BatchResult:
    """Derive the given events if still pending (safe to call twice, concurrently)."""
    result = derive_event_ids(event_ids)
    logger.info(
        "derive_events claimed=%d derived=%d failed=%d",
        result.claimed,
        result.derived,
        result.failed,
    )
    return result


def drain_pending(
    time_budget_seconds: float = DRAIN_TIME_BUDGET_SECONDS, batch_size: int = BATCH_SIZE
) -> tuple[BatchResult, bool]:
    """Derive whatever is pending, however new, batch by batch for up to
    ``time_budget_seconds``; also says whether the budget ended with events still pending.

    The derive task calls this after its own ids: ingest keeps at most one task waiting
    (ADR 0053), and a one-event batch costs ~8 ms against ~0.9 ms per event in a batch of
    500, so one task derives everything committed since the last one started, in large
    batches.
    """
    return _derive_pending("drain_pending", 0, time_budget_seconds, batch_size)


def sweep_underived(
    older_than_seconds: float = SWEEP_AFTER_SECONDS,
    time_budget_seconds: float = SWEEP_TIME_BUDGET_SECONDS,
    batch_size: int = BATCH_SIZE,
) -> BatchResult:
    """Derive events that are still pending after ``older_than_seconds``, batch by batch."""
    swept, _ = _derive_pending(
        "sweep_underived", older_than_seconds, time_budget_seconds, batch_size
    )
    return swept


def _derive_pending(
    name: str, older_than_seconds: float, time_budget_seconds: float, batch_size: int
) -> tuple[BatchResult, bool]:
    total = BatchResult()
    deadline = time.monotonic() + time_budget_seconds
    while True:
        result = derive_pending_batch(older_than_seconds, batch_size)
        total += result
        more = result.claimed >= batch_size
        if not more or time.monotonic() >= deadline:
            break
    if total.claimed:
        logger.info(
            "%s claimed=%d derived=%d failed=%d",
            name,
            total.claimed,
            total.derived,
            total.failed,
        )
    return total, more


def _still_held(newest: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(_STILL_HELD, {"newest": newest})
        return bool(cursor.fetchone()[0])


def rederive(
    since: datetime | None = None,
    batch_size: int = BATCH_SIZE,
    progress: Callable[[BatchResult], None] | None = None,
) -> BatchResult:
    """Rebuild the catalog from the raw log.

    Without ``since``: empty every derived table, mark every event pending and derive them
    all, which is by construction the state a clean derivation gives, but that every
    dataset, job and run keeps its id (ADR 0077: remembered by natural key). With ``since``: mark
    the events with eventTime >= ``since`` pending, with every event of the runs they
    belong to, and derive them again on top of the current catalog (derivation only ever
    adds, so this applies changed code or new rules to that range; a full rederive is what
    drops state that should no longer exist, e.g. after an alias rule was removed).
    """
    if batch_size < 1:  # a batch of none claims nothing and would end the loop at once
        raise ValueError(f"batch_size must be 1 or more (got {batch_size})")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM ingest_event")
        newest = cursor.fetchone()[0]
        if since is None:
            # Check deferred foreign keys now: TRUNCATE refuses tables with pending checks
            # (only the case when called inside an outer transaction, e.g. tests).
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            # Same identity, same id: derivation reuses what is remembered here (ADR 0077).
            remembered.remember(cursor)
            cursor.execute(f"TRUNCATE {', '.join(derived_tables())}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            derivation_status.reset_all(cursor)
        else:
            derivation_status.reset_since(cursor, since)
    if since is None:
        # What retention kept of the events it removed comes first, as a batch of facts
        # (jobs, aliases, links), so every event derives on top of it (ADR 0079).
        derive_retained()
    total = BatchResult()
    while True:
        result = derive_pending_batch(0, batch_size)
        total += result
        if progress is not None:
            progress(total)
        if result.claimed == 0:
            # A worker of the running service may hold some of them (claims skip locked
            # rows). Ending now would forget the remembered ids and fold the summarised
            # edges while its batch still derives: it would give new ids, and the edges of
            # datasets it had not yet written back would be missed.
            if not _still_held(newest):
                break
            time.sleep(HELD_POLL_SECONDS)
    if since is None:
        # Every event is derived again, so every remembered id that still names an
        # identity is in use again; the others (a name no event gives any more) go.
        with transaction.atomic(), connection.cursor() as cursor:
            # The removed runs' edge summaries, once every dataset they name exists again.
            retained.restore_edges(cursor)
            remembered.forget(cursor)
            # Retirements are kept, their change records were emptied (ADR 0088).
            record_all_retirements()
    return total

"""Retention: keep the store bounded without losing lineage (ADR 0079).

``apply_retention(days)`` removes every run no event has been derived into for ``days``,
with its own rows (its datasets, run facts, column facts, edge rows) and its events, then
every other event received more than ``days`` ago. What those runs and events gave the
catalog is folded into the summaries of ``catalog.models.retained`` in the same
transaction as the removal, so every job, dataset and edge keeps its first and last
seen and its counts, and a full rederive gives the same graph with the same ids.

Short transactions of ``batch_size`` rows each, so locks are short and the service keeps
serving. Derivation is never waited for: a run is taken only with its row lock and its
runId's transaction lock, both without waiting (``SKIP LOCKED``, the try-lock derivation
itself uses), and an event only with ``FOR UPDATE SKIP LOCKED``, which a claiming batch
holds. Events still pending are never removed (their lineage is not derived yet), nor is
the JobEvent a job's current declared lineage comes from (``catalog_static_lineage``:
current state, one event per job, not history), nor the events of a run still in the
catalog (they go with their run, so a rederive rebuilds a kept run from all its events).
A run another job's run of the same runId shared it with leaves that run unflagged
(``shares_run_id``) when it was the last sharer, in the batch's transaction (ADR 0202).
"""

import hashlib
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from catalog.names import naming
from catalog.services.derivation import retained, run_conflicts
from catalog.services.derivation.locks import RUN_TEXT_LOCK, RUN_UUID_LOCK

logger = logging.getLogger(__name__)

# Rows per transaction: Marquez's dbRetention deletes 1,000 at a time too.
BATCH_SIZE = 1_000
# Seconds one batch's transaction may hold its locks. A batch of 1,000 runs took 16.4 s at
# 1M events on a loaded machine (its summaries upsert the jobs, datasets and edges that
# derivation also writes), so the size is a ceiling: the first batch is small, a batch
# well under the budget doubles the next (never past ``batch_size``), and one over it
# shrinks the next in proportion, aiming at half the budget. Halving alone was too slow:
# at load 19 a first batch of 1,000 held its locks for 5.1 s against a budget of 2.
TIME_BUDGET = 2.0
FIRST_BATCH_SIZE = 100
# Longest window: its cutoff must be a date Python can compute (year 1 at the earliest);
# a thousand years keeps everything any store holds, the most a wish to keep it all can mean.
MAX_DAYS = 365_000
MIN_BATCH_SIZE = 10


def next_batch_size(size: int, elapsed: float, budget: float, ceiling: int) -> int:
    """The size of the batch after one of ``size`` rows that took ``elapsed`` seconds."""
    if elapsed > budget:
        aimed = int(size * budget / (2 * elapsed))
        return max(min(MIN_BATCH_SIZE, ceiling), min(size // 2, aimed))
    if elapsed < budget / 4:
        return min(ceiling, size * 2)
    return size


# Removable runs in id order after a given id; no event has been derived into them since
# the cutoff (derivation sets updated_at on every run it writes, after the event was
# received, so every event of such a run was received before the cutoff).
_RUNS = """
SELECT r.id, r.run_uuid, r.run_id_text, j.key_hash
FROM catalog_run r JOIN catalog_job j ON j.id = r.job_id
WHERE r.id > %(after)s AND r.updated_at < %(cutoff)s
ORDER BY r.id LIMIT %(limit)s
FOR UPDATE OF r SKIP LOCKED
"""
# The events of those runs (md5 first: the run_id index is on md5, ADR 0025), removed
# with them, so a run that an event names later starts again from that event alone.
_RUN_EVENTS = """
SELECT id, run_id, job_namespace, job_name FROM ingest_event
WHERE md5(run_id) = ANY(%(digests)s) AND run_id = ANY(%(run_ids)s)
  AND received_at < %(cutoff)s AND derivation_status <> 'pending'
FOR UPDATE SKIP LOCKED
"""
# Of those, the runs whose runId no derivation batch holds (derivation's own try-lock),
# nor a text runId's text (NULL for a UUID runId): a batch recomputes the flags of all of
# a text's runs under its lock, so a run of it locked here would make that batch wait
# (ADR 0201).
_TRY_RUN_LOCKS = f"""
SELECT id FROM unnest(%s::bigint[], %s::uuid[], %s::text[]) AS c(id, u, t)
WHERE CASE WHEN pg_try_advisory_xact_lock({RUN_UUID_LOCK})
    THEN t IS NULL OR pg_try_advisory_xact_lock({RUN_TEXT_LOCK}) ELSE false END
"""
# A run's own rows, then what points at it; each statement by an index on run_id.
_DELETE_RUN_ROWS = [
    "DELETE FROM catalog_lineage_edge_run WHERE run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_job_edge_run WHERE run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_column_lineage_fact WHERE run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_run_dataset_facet WHERE run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_run_dataset_pair WHERE run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_run_dataset WHERE run_id = ANY(%(runs)s)",
    "UPDATE catalog_lineage_edge SET last_run_id = NULL WHERE last_run_id = ANY(%(runs)s)",
    "UPDATE catalog_job_edge SET last_run_id = NULL WHERE last_run_id = ANY(%(runs)s)",
    "UPDATE catalog_column_lineage_edge SET last_run_id = NULL WHERE last_run_id = ANY(%(runs)s)",
    "UPDATE catalog_run SET parent_run_id = NULL WHERE parent_run_id = ANY(%(runs)s)",
    "DELETE FROM catalog_run WHERE id = ANY(%(runs)s)",
]

# Removable events in id order: received before the cutoff (ids follow receipt, so the
# walk stops at the last such id), derived or failed, not a current declaration. Of those,
# the events of a run the catalog still holds stay (``_of_kept_runs``).
_LAST_EVENT = "SELECT MAX(id) FROM ingest_event WHERE received_at < %s"
_EVENTS = """
SELECT id, run_id, job_namespace, job_name FROM ingest_event e
WHERE id > %(after)s AND id <= %(last)s AND received_at < %(cutoff)s
  AND derivation_status <> 'pending'
  AND NOT EXISTS (SELECT 1 FROM catalog_static_lineage s WHERE s.event_id = e.id)
ORDER BY id LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
"""
_RUNS_HELD = """
SELECT r.run_uuid, j.key_hash FROM catalog_run r JOIN catalog_job j ON j.id = r.job_id
WHERE r.run_uuid = ANY(%s::uuid[]) AND (%s::timestamptz IS NULL OR r.updated_at >= %s)
"""
_EVENT_ALIASES = "SELECT DISTINCT alias_id FROM catalog_event_dataset WHERE event_id = ANY(%s)"
_EVENT_BYTES = "SELECT COALESCE(SUM(pg_column_size(e.*)), 0) FROM ingest_event e WHERE id = ANY(%s)"
_DELETE_EVENT_ROWS = [
    "DELETE FROM catalog_event_dataset WHERE event_id = ANY(%(events)s)",
    "DELETE FROM catalog_metadata_record WHERE event_id = ANY(%(events)s)",
    "UPDATE catalog_dataset_alias SET reason_event_id = NULL"
    " WHERE reason_event_id = ANY(%(events)s)",
    "UPDATE catalog_alias_link SET reason_event_id = NULL WHERE reason_event_id = ANY(%(events)s)",
    "UPDATE ingest_dead_letter SET replayed_event_id = NULL"
    " WHERE replayed_event_id = ANY(%(events)s)",
    # Schema versions and changes keep their place in a dataset's history; the evidence
    # goes with the event (ADR 0082).
    "UPDATE catalog_schema_version SET first_event_id = NULL"
    " WHERE first_event_id = ANY(%(events)s)",
    "UPDATE catalog_dataset_change SET event_id = NULL WHERE event_id = ANY(%(events)s)",
    "DELETE FROM ingest_event WHERE id = ANY(%(events)s)",
]

# The runs a run would remove, counted without a lock (--dry-run).
_COUNT_RUNS = "SELECT COUNT(*) FROM catalog_run WHERE updated_at < %s"


@dataclass
class RetentionResult:
    cutoff: datetime
    events: int = 0
    runs: int = 0
    bytes: int = 0  # the removed events' size as stored (pg_column_size of their rows)
    skipped: int = 0  # runs left for the next time: derivation held them
    dry_run: bool = False
    batches: int = 0  # transactions it took
    slowest_batch: float = 0.0  # seconds, the longest any one held its locks
    smallest_batch: int = 0  # rows, the least the time budget shrank a batch to


class _Pacer:
    """Times each batch and sizes the next one within the time budget."""

    def __init__(self, result: RetentionResult, ceiling: int, budget: float) -> None:
        self.result, self.ceiling, self.budget = result, ceiling, budget
        self.size = result.smallest_batch = min(ceiling, FIRST_BATCH_SIZE)
        self.started = 0.0

    def __enter__(self) -> int:
        self.started = time.monotonic()
        return self.size

    def __exit__(self, *exc: object) -> None:
        elapsed = time.monotonic() - self.started
        result = self.result
        result.batches += 1
        result.slowest_batch = max(result.slowest_batch, elapsed)
        result.smallest_batch = min(result.smallest_batch, self.size)
        self.size = next_batch_size(self.size, elapsed, self.budget, self.ceiling)


def apply_retention(
    days: int,
    dry_run: bool = False,
    batch_size: int = BATCH_SIZE,
    now: datetime | None = None,
    time_budget: float = TIME_BUDGET,
) -> RetentionResult:
    """Remove events received more than ``days`` ago and the runs they alone made, each
    batch in its own short transaction of at most ``batch_size`` rows, smaller while
    batches take longer than ``time_budget`` seconds; with ``dry_run``, only count them."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be a whole number from 1 to {MAX_DAYS} (got {days})")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    result = RetentionResult(cutoff=cutoff, dry_run=dry_run)
    pacer = _Pacer(result, batch_size, time_budget)
    after = 0
    if dry_run:
        with connection.cursor() as cursor:
            cursor.execute(_COUNT_RUNS, [cutoff])
            result.runs = cursor.fetchone()[0]
    while not dry_run:
        with pacer as size:
            batch = _remove_runs(cutoff, after, size)
        result.runs += batch.runs
        result.skipped += batch.skipped
        result.events += batch.events
        result.bytes += batch.bytes
        if batch.after == 0:
            break
        after = batch.after
    with connection.cursor() as cursor:
        cursor.execute(_LAST_EVENT, [cutoff])
        last = cursor.fetchone()[0]
    after = 0
    while last is not None:
        with pacer as size:
            after, removed, stored = _remove_events(cutoff, after, last, size, dry_run)
        result.events += removed
        result.bytes += stored
        if after == 0:
            break
    logger.info(
        "retention cutoff=%s dry_run=%s events=%d runs=%d bytes=%d skipped_runs=%d "
        "batches=%d slowest_batch=%.2fs smallest_batch=%d",
        cutoff.isoformat(),
        dry_run,
        result.events,
        result.runs,
        result.bytes,
        result.skipped,
        result.batches,
        result.slowest_batch,
        result.smallest_batch,
    )
    return result


@dataclass
class _Batch:
    after: int = 0  # the last id looked at; 0 when none was left
    runs: int = 0
    skipped: int = 0
    events: int = 0
    bytes: int = 0


def _remove_runs(cutoff: datetime, after: int, limit: int) -> _Batch:
    """One batch of runs, with their events."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_RUNS, {"after": after, "cutoff": cutoff, "limit": limit})
        candidates = cursor.fetchall()
        if not candidates:
            return _Batch()
        texts = [naming.text_run_id(row[2]) for row in candidates]
        cursor.execute(
            _TRY_RUN_LOCKS,
            [[row[0] for row in candidates], [row[1] for row in candidates], texts],
        )
        taken = {run for (run,) in cursor.fetchall()}
        batch = _Batch(candidates[-1][0], len(taken), len(candidates) - len(taken))
        if not taken:
            return batch
        runs = [row for row in candidates if row[0] in taken]
        retained.keep_runs(cursor, sorted(taken))
        run_ids = sorted({row[2] for row in runs})
        cursor.execute(
            _RUN_EVENTS,
            {
                "digests": [hashlib.md5(text.encode()).hexdigest() for text in run_ids],
                "run_ids": run_ids,
                "cutoff": cutoff,
            },
        )
        keys = {(row[1], bytes(row[3])) for row in runs}
        events = [
            row[0]
            for row in cursor.fetchall()
            if (
                naming.job_run_uuid(row[1], row[2] or "", row[3] or ""),
                naming.job_key(row[2] or "", row[3] or ""),
            )
            in keys
        ]
        for statement in _DELETE_RUN_ROWS:
            cursor.execute(statement, {"runs": sorted(taken)})
        # A runId another job's run kept alone is no longer shared (ADR 0202): under the
        # locks taken above, in this transaction.
        run_conflicts.unflag_left_alone(run_conflicts.RunIds.of([row[1:3] for row in runs]))
        if events:
            batch.events, batch.bytes = len(events), _delete_events(cursor, events)
        return batch


def _delete_events(cursor: Any, events: list[int]) -> int:
    """Summarise the aliases ``events`` named, remove them and what points at them;
    returns their size as stored."""
    cursor.execute(_EVENT_BYTES, [events])
    size = cursor.fetchone()[0]
    cursor.execute(_EVENT_ALIASES, [events])
    retained.keep_aliases(cursor, [alias for (alias,) in cursor.fetchall()])
    for statement in _DELETE_EVENT_ROWS:
        cursor.execute(statement, {"events": events})
    return int(size)


def _remove_events(
    cutoff: datetime, after: int, last: int, limit: int, dry_run: bool
) -> tuple[int, int, int]:
    """One batch of events: (last id looked at, 0 when none was left; removed; bytes).
    A dry run reads the same batches without a lock and counts what would go (the runs
    the run phase would remove counted as gone)."""
    with transaction.atomic(), connection.cursor() as cursor:
        select = _EVENTS.replace("FOR UPDATE SKIP LOCKED", "") if dry_run else _EVENTS
        cursor.execute(select, {"after": after, "last": last, "cutoff": cutoff, "limit": limit})
        rows = cursor.fetchall()
        if not rows:
            return 0, 0, 0
        kept = _of_kept_runs(cursor, rows, cutoff if dry_run else None)
        events = [row[0] for row in rows if row[0] not in kept]
        if not events:
            return rows[-1][0], 0, 0
        if dry_run:
            cursor.execute(_EVENT_BYTES, [events])
            return rows[-1][0], len(events), cursor.fetchone()[0]
        return rows[-1][0], len(events), _delete_events(cursor, events)


def _of_kept_runs(
    cursor: Any, rows: list[tuple[Any, ...]], removable_before: datetime | None = None
) -> set[int]:
    """The events among ``rows`` (id, runId, job namespace, job name) whose run is still in
    the catalog: a run is removed whole or not at all, so that a rederive rebuilds a kept
    run from all of its events (a streaming job's run, an old run that got a late event).
    They go with their run, once no event has been derived into it for the whole window."""
    keys: dict[int, tuple[uuid.UUID, bytes]] = {}
    for event_id, run_id, job_namespace, job_name in rows:
        if run_id and job_namespace is not None and job_name is not None:
            run_uuid = naming.job_run_uuid(run_id, job_namespace, job_name)
            keys[event_id] = (run_uuid, naming.job_key(job_namespace, job_name))
    if not keys:
        return set()
    cursor.execute(
        _RUNS_HELD,
        [sorted({run_uuid for run_uuid, _ in keys.values()}), removable_before, removable_before],
    )
    held = {(run_uuid, bytes(job)) for run_uuid, job in cursor.fetchall()}
    return {event_id for event_id, key in keys.items() if key in held}

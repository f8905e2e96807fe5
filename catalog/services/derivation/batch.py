"""One derivation batch: claim events, derive them in one short transaction, mark them.

Claiming is ``SELECT ... FOR NO KEY UPDATE SKIP LOCKED`` inside the derivation transaction: two
workers never derive the same event, and a worker killed mid-batch simply rolls back, which
leaves its events pending for the sweep (ADR 0024).
"""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction

from catalog.models import RETIREMENT_LOCK, AliasRule
from catalog.names.rules import RuleSet
from catalog.services.derivation import retained
from catalog.services.derivation.control_edges import store_control_edges
from catalog.services.derivation.datasets import derive_aliases, ensure_aliases
from catalog.services.derivation.declarations import store_declarations
from catalog.services.derivation.edges import (
    recompute_edges,
    store_event_datasets,
    store_job_datasets,
    store_metadata,
    store_run_facts,
)
from catalog.services.derivation.facts import Extractor
from catalog.services.derivation.io_facets import store_run_dataset_facets
from catalog.services.derivation.job_edges import recompute_job_edges
from catalog.services.derivation.jobs_runs import (
    derive_runs,
    ensure_jobs,
    ensure_referenced_runs,
    lock_held_runs,
    merge_jobs,
    referenced_runs,
    split_runs,
)
from catalog.services.derivation.records import BadEvent, Facts, RawEvent
from catalog.services.derivation.revival import revive
from catalog.services.derivation.run_changes import record_run_changes
from catalog.services.derivation.schema_changes import record_schema_changes
from catalog.services.derivation.skipped import skipped_facets
from ingest.derivation_status import CLAIM_IDS as _CLAIM_IDS
from ingest.derivation_status import CLAIM_PENDING as _CLAIM_PENDING
from ingest.derivation_status import MARK_DERIVED as _MARK_DERIVED
from ingest.derivation_status import MARK_FAILED as _MARK_FAILED

logger = logging.getLogger(__name__)

BATCH_SIZE = 500
# PostgreSQL SQLSTATEs worth retrying at once: deadlock, serialization failure.
_RETRY_NOW = {"40P01", "40001"}
# A foreign-key violation: another batch's row committed meanwhile (``_apply``), tried again.
_FOREIGN_KEY = "23503"
FOREIGN_KEY_TRIES = 3


# Failed events whose errors a sum of batches keeps, the smallest ids (``rederive`` prints
# 20): every failure of a rederive of millions of events was kept until its report.
KEPT_ERRORS = 100


@dataclass
class BatchResult:
    claimed: int = 0
    derived: int = 0
    failed: int = 0
    errors: dict[int, str] = field(default_factory=dict)

    def __iadd__(self, other: "BatchResult") -> "BatchResult":
        self.claimed += other.claimed
        self.derived += other.derived
        self.failed += other.failed
        self.errors.update(other.errors)
        if len(self.errors) > KEPT_ERRORS:
            self.errors = dict(sorted(self.errors.items())[:KEPT_ERRORS])
        return self


T = TypeVar("T")


def _sqlstate(error: BaseException) -> str | None:
    cause = error.__cause__
    return getattr(cause, "sqlstate", None) if cause is not None else None


def retrying(operation: Callable[[], T], attempts: int = 5) -> T:
    """Run ``operation`` (a whole transaction) again after a deadlock or serialization error."""
    for attempt in range(1, attempts + 1):
        try:
            return operation()
        except OperationalError as error:
            if _sqlstate(error) not in _RETRY_NOW or attempt == attempts:
                raise
            logger.info("derive_retry attempt=%d sqlstate=%s", attempt, _sqlstate(error))
            time.sleep(0.01 * attempt)
    raise AssertionError("unreachable")


def _row_to_event(row: Sequence[Any]) -> RawEvent:
    # The columns of ingest.derivation_status.CLAIMED_COLUMNS, in that order.
    payload = row[7]
    if isinstance(payload, str | bytes):
        payload = orjson.loads(payload)
    return RawEvent(
        id=row[0],
        kind=row[1],
        event_type=row[2],
        event_time=row[3],
        run_id=row[4],
        job_namespace=row[5],
        job_name=row[6],
        payload=payload,
        digest=bytes(row[8]),
        skipped_facets=skipped_facets(_json(row[9])),
    )


def _json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str | bytes) else value


def extract_all(events: list[RawEvent], rules: RuleSet) -> tuple[Facts, dict[int, str]]:
    """Facts of the readable events, and the reasons of the unreadable ones."""
    failed: dict[int, str] = {}
    while True:
        extractor = Extractor(rules)
        try:
            for event in events:
                if event.id not in failed:
                    current = event
                    extractor.add(event)
            return extractor.facts, failed
        except BadEvent as error:
            failed[current.id] = f"BadEvent: {error}"


def apply_facts(facts: Facts) -> None:
    """Write the facts of a batch: first what no other batch contends for, then the shared
    aggregates, in the lock order of locks.py.

    The free part writes rows that only this batch writes: new jobs and aliases (insert if
    missing, ids read without a lock), the runs it only names (a parent: id read, a
    placeholder inserted if missing, no lock), the runs whose runId lock it takes without waiting,
    their dataset rows and column facts, the events' dataset and metadata rows. The
    contended part starts with the runs another batch held, then folds the batch into the
    jobs, aliases and datasets, the job-dataset rows, the lineage, column and job edges.
    Every batch of a stream touches the same aggregate rows, so only one batch at a time
    is in its contended part; the others meanwhile do their free part (ADR 0049).
    """
    job_ids = ensure_jobs(facts)
    alias_ids = ensure_aliases(facts)
    references = referenced_runs(facts)
    run_ids = ensure_referenced_runs(facts, job_ids, references)
    ours, held = split_runs(facts, set(references))
    own_ids, moved, left, snapshots = derive_runs(facts, job_ids, ours, run_ids)
    run_ids.update(own_ids)
    stored = store_run_facts(facts, run_ids, alias_ids, ours)
    store_run_dataset_facets(facts, run_ids, alias_ids, ours)
    store_event_datasets(facts, alias_ids)
    store_metadata(facts)
    # The contended part.
    if held:
        lock_held_runs(facts, held)
        held_ids, _, held_left, held_snapshots = derive_runs(facts, job_ids, held, run_ids)
        run_ids.update(held_ids)
        left.update(held_left)
        snapshots |= held_snapshots
        stored |= store_run_facts(facts, run_ids, alias_ids, held)
        store_run_dataset_facets(facts, run_ids, alias_ids, held)
    merge_jobs(facts, job_ids)
    store_control_edges(facts, job_ids)  # control flow, never data lineage (ADR 0090)
    _, merged_runs = derive_aliases(facts, alias_ids)
    record_schema_changes(facts, alias_ids)  # the aliases are locked above
    store_job_datasets(facts, job_ids, alias_ids)
    store_declarations(facts, job_ids, alias_ids)  # static lineage (jobs locked above)
    rebuild = merged_runs | set(moved)
    # Every run with events in the batch, not only those that named datasets: a FAIL or
    # COMPLETE without inputs or outputs changes whether the run's edges count it as a
    # write (ADR 0069), and the rebuild re-counts them.
    touched = stored.touched | rebuild | {run_ids[key] for key in (*ours, *held)}
    recompute_edges(touched, moved, stored, rebuild, snapshots)
    recompute_job_edges(touched)
    # Last: the change records read the edges and runs just written (ADR 0088), and the
    # starts the moved runs left (their old followers' previous run changed).
    record_run_changes(touched, left)


def _apply(events: list[RawEvent], facts: Facts, rules: RuleSet) -> None:
    """``apply_facts`` and ``revive`` of ``events`` in a savepoint, run again from their
    facts after a foreign-key violation, up to ``FOREIGN_KEY_TRIES`` in all.

    Derivation references only rows it has just read or written, so a foreign key fails
    only on a row another batch committed meanwhile: a run it added to an edge this batch
    found empty and deletes (``edge_runs.py``, ADR 0203). Run again, the statements see
    that row and keep the edge. Counted as a failure of the batch, such a race marked
    good events failed (once the batch's events, tried one by one, met it a second time).
    """
    for attempt in range(1, FOREIGN_KEY_TRIES + 1):
        try:
            with transaction.atomic():
                apply_facts(facts)
                revive(events)
            return
        except IntegrityError as error:
            if _sqlstate(error) != _FOREIGN_KEY or attempt == FOREIGN_KEY_TRIES:
                raise
            logger.info("derive_foreign_key_retry attempt=%d events=%d", attempt, len(events))
            facts = extract_all(events, rules)[0]  # afresh: nothing of the try carried over


def _derive(events: list[RawEvent], rules: RuleSet) -> tuple[list[int], dict[int, str]]:
    facts, failed = extract_all(events, rules)
    good = [event for event in events if event.id not in failed]
    try:
        _apply(good, facts, rules)
        return [event.id for event in good], failed
    except (OperationalError, InterfaceError):
        raise  # transient: the whole batch rolls back and is retried
    except Exception as error:
        # What failed, by kind (its message may quote an event's values: it is kept with
        # the event that fails again alone, redacted where it is read).
        logger.warning(
            "derive_batch_failed events=%d error=%s sqlstate=%s retrying_one_by_one",
            len(good),
            type(error).__name__,
            _sqlstate(error) or "-",
        )
    derived = []
    for event in good:  # find the poison: each event in its own savepoint
        try:
            _apply([event], extract_all([event], rules)[0], rules)
            derived.append(event.id)
        except (OperationalError, InterfaceError):
            raise
        except Exception as error:
            failed[event.id] = f"{type(error).__name__}: {error}"[:4000]
    return derived, failed


def derive_claimed(claim_sql: str, params: list[Any]) -> BatchResult:
    """Claim events with ``claim_sql``, derive and mark them, all in one transaction."""

    def run() -> BatchResult:
        with transaction.atomic(), connection.cursor() as cursor:
            # Not waiting for the WAL flush at commit (ADR 0051): a batch lost in a crash is
            # lost whole, its events' 'derived' mark with it, so they are pending again and
            # the sweep derives them; meanwhile the shared rows' locks are not held
            # through a disk flush. In the same statement the retirement lock, shared, for
            # the batch's revival (revival.py, ADR 0078).
            cursor.execute(
                "SELECT set_config('synchronous_commit', 'off', true), "
                "pg_advisory_xact_lock_shared(%s)",
                [RETIREMENT_LOCK],
            )
            # Foreign keys checked by each statement, not all at commit: the checks of the
            # free part's inserts then run before the batch takes its shared locks, not while
            # it holds them. (Reset at the end: nested in a caller's transaction, a released
            # savepoint would keep the setting; every key of the schema is deferred.)
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            result = claim_and_derive(cursor)
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            return result

    def claim_and_derive(cursor: Any) -> BatchResult:
        cursor.execute(claim_sql, params)
        events = [_row_to_event(row) for row in cursor.fetchall()]
        if not events:
            return BatchResult()
        derived, failed = _derive(events, AliasRule.objects.rule_set())
        if derived:
            cursor.execute(_MARK_DERIVED, [derived])
        if failed:
            ids = sorted(failed)
            cursor.execute(_MARK_FAILED, [ids, [failed[event_id] for event_id in ids]])
            for event_id in ids:
                logger.warning("derive_event_failed event=%d error=%s", event_id, failed[event_id])
        return BatchResult(len(events), len(derived), len(failed), failed)

    return retrying(run)


def derive_retained() -> None:
    """Derive what retention kept of the events it removed (``retained.retained_facts``),
    as one batch without events, the first of a full rederive (ADR 0079)."""
    facts = retained.retained_facts(AliasRule.objects.rule_set())
    if not (facts.jobs or facts.aliases):
        return

    def run() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            apply_facts(facts)
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")

    retrying(run)


def derive_event_ids(event_ids: Sequence[int], batch_size: int = BATCH_SIZE) -> BatchResult:
    """Derive the pending events among ``event_ids`` (others are skipped)."""
    total = BatchResult()
    ids = sorted({int(event_id) for event_id in event_ids})
    for start in range(0, len(ids), batch_size):
        total += derive_claimed(_CLAIM_IDS, [ids[start : start + batch_size]])
    return total


def derive_pending_batch(older_than_seconds: float, batch_size: int = BATCH_SIZE) -> BatchResult:
    """Derive one batch of events pending for more than ``older_than_seconds``."""
    return derive_claimed(_CLAIM_PENDING, [older_than_seconds, batch_size])

"""Runs that share their runId with another job's run (ADR 0028).

A run is identified by (runId, job), so two jobs sending one runId keep two runs; that is
a producer's mistake worth showing, not hiding. ``Run.shares_run_id`` is true on every own
(non-placeholder) run whose runId another own run also has. It is recomputed for every
runId a batch touches, under a transaction-scoped advisory lock per runId, so two batches
deriving the two jobs at once cannot both miss each other: the second waits for the first
to commit and then sees its run. The result is the same in any order and batching.

A runId that is no UUID is keyed per job (uuid5 over the job and the text), so its runs
have a run_uuid each and are recomputed by their text instead, under the text's lock
(``locks.RUN_TEXT_LOCK``, ADR 0201): one UPDATE for all the texts of a batch, reading each
text's runs on catalog_run_text_idx ``(md5(run_id_text), id)``, writing only the rows whose
flag changes. Its cost grows with the text's runs, not with their pairs.

A deletion (retention, a namespace purge) can only turn flags off: the runIds of the runs it
deleted are looked at again in its transaction, under their locks, and a runId left with
fewer than two own runs has its remaining own run unflagged (``unflag_left_alone``, ADR
0202). Two runs read per runId at most, and one written, however many jobs sent it.
"""

import uuid
from dataclasses import dataclass

from django.db import connection, transaction

from catalog.names import naming
from catalog.services.derivation.locks import (
    lock_run_texts,
    lock_run_uuids,
    try_lock_run_texts,
    try_lock_run_uuids,
)

_MARK = """
UPDATE catalog_run r SET shares_run_id = s.shared AND NOT r.is_placeholder
FROM (
    SELECT run_uuid, count(*) FILTER (WHERE NOT is_placeholder) > 1 AS shared
    FROM catalog_run WHERE run_uuid = ANY(%s::uuid[]) GROUP BY run_uuid
) s
WHERE r.run_uuid = ANY(%s::uuid[]) AND r.run_uuid = s.run_uuid
  AND r.shares_run_id IS DISTINCT FROM (s.shared AND NOT r.is_placeholder)
"""


def mark_shared_run_ids(run_uuids: list[uuid.UUID]) -> None:
    """Recompute ``shares_run_id`` for every run of ``run_uuids`` (sorted)."""
    if not run_uuids:
        return
    lock_run_uuids(run_uuids)  # already held by the batch: a no-op then
    with connection.cursor() as cursor:
        cursor.execute(_MARK, [run_uuids, run_uuids])


# Shared: two own runs keep the text (LIMIT 2: the decision reads at most two of them),
# decided once a text (MATERIALIZED: inlined, it was decided again for each of its runs).
# The text is compared after md5, as the index holds it, so a long text is no problem.
_MARK_TEXTS = """
WITH s AS MATERIALIZED (
    SELECT t, (
        SELECT count(*) FROM (
            SELECT 1 FROM catalog_run o
            WHERE md5(o.run_id_text) = md5(t) AND o.run_id_text = t AND NOT o.is_placeholder
            LIMIT 2
        ) AS two
    ) > 1 AS shared
    FROM unnest(%s::text[]) AS t
)
UPDATE catalog_run r SET shares_run_id = s.shared AND NOT r.is_placeholder
FROM s
WHERE md5(r.run_id_text) = md5(s.t) AND r.run_id_text = s.t
  AND r.shares_run_id IS DISTINCT FROM (s.shared AND NOT r.is_placeholder)
"""


def mark_shared_run_texts(texts: list[str]) -> int:
    """Recompute ``shares_run_id`` for every run of the text runIds ``texts`` (sorted, none
    a UUID); returns the rows changed."""
    if not texts:
        return 0
    lock_run_texts(texts)  # already held by the batch: a no-op then
    with connection.cursor() as cursor:
        cursor.execute(_MARK_TEXTS, [texts])
        return cursor.rowcount


# The next ``batch`` runs by id, and the texts among them another job's own run keeps: a
# run whose run_uuid is its text (a UUID runId as sent) or that is flagged already (by an
# earlier span, or an earlier pass) is not looked up, so a store where no text runId is
# shared costs one read of the table, in spans, and a probe of catalog_run_text_idx per
# unflagged run of a text runId.
_SPAN = """
SELECT max(id), array_agg(DISTINCT run_id_text) FILTER (WHERE shared) FROM (
    SELECT r.id, r.run_id_text,
        CASE WHEN NOT r.is_placeholder AND NOT r.shares_run_id
            AND r.run_uuid::text <> lower(r.run_id_text)
        THEN EXISTS (
            SELECT 1 FROM catalog_run o
            WHERE md5(o.run_id_text) = md5(r.run_id_text) AND o.run_id_text = r.run_id_text
              AND o.run_uuid <> r.run_uuid AND NOT o.is_placeholder
        ) ELSE false END AS shared
    FROM catalog_run r WHERE r.id > %s ORDER BY r.id LIMIT %s
) AS span
"""


def mark_all_shared_run_texts(batch: int = 10_000) -> int:
    """Recompute ``shares_run_id`` of every text runId two jobs' own runs keep (the data
    migration of ADR 0201), reading the runs ``batch`` a transaction by id; returns
    the rows changed. Idempotent: run again (a migration interrupted), it changes nothing
    it changed before."""
    changed, after = 0, 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_SPAN, [after, batch])
            upto, shared = cursor.fetchone()
            if upto is None:
                return changed
            # A text a derivation batch holds is left to it: the batch derives a run of the
            # text and recomputes it before its commit. So this never waits for a batch.
            texts = try_lock_run_texts(sorted(shared or []))
            changed += mark_shared_run_texts(texts)
        after = upto


@dataclass(frozen=True)
class RunIds:
    """The runIds of some runs: ``uuids`` the UUID runIds, ``texts`` the text runIds and
    ``text_keys`` their runs' run_uuids (uuid5 per job, locked as derivation locks them);
    each sorted, the order every batch takes their locks in."""

    uuids: list[uuid.UUID]
    texts: list[str]
    text_keys: list[uuid.UUID]

    @classmethod
    def of(cls, rows: list[tuple[uuid.UUID, str]]) -> "RunIds":
        """Of (run_uuid, run_id_text) rows."""
        uuids, texts, keys = set(), set(), set()
        for run_uuid, run_id in rows:
            if (text := naming.text_run_id(run_id)) is None:
                uuids.add(run_uuid)
            else:
                texts.add(text)
                keys.add(run_uuid)
        return cls(sorted(uuids), sorted(texts), sorted(keys))


def run_ids_of(run_ids: list[int]) -> RunIds:
    """The runIds of the runs ``run_ids`` (a runId never changes: read without a lock)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT run_uuid, run_id_text FROM catalog_run WHERE id = ANY(%s)",
            [run_ids],
        )
        return RunIds.of(cursor.fetchall())


def lock_run_ids(run_ids: RunIds) -> None:
    """Take the locks of ``run_ids``, the texts' (sorted), then the runIds' (sorted, a text
    run's key among them), never waiting while holding one of them: all are tried without
    waiting, in a savepoint; if one is held elsewhere, the savepoint is rolled back (which
    releases those taken), that one is waited for alone (and released), and all are tried
    again. A derivation batch holds the runIds it got without waiting while it waits for
    the rest (``jobs_runs.lock_held_runs``), so a deletion that waited for its sorted list
    holding the first ones made a deadlock with it, which PostgreSQL ended (ADR 0209). Take
    them before the transaction writes anything a batch might wait for. Already held
    (retention's try-locks): taken at the first try. In a transaction only."""
    keys = sorted({*run_ids.uuids, *run_ids.text_keys})
    while True:
        tried = transaction.savepoint()
        texts = set(try_lock_run_texts(run_ids.texts))
        busy_text = next((text for text in run_ids.texts if text not in texts), None)
        busy_key = None
        if busy_text is None:
            taken = set(try_lock_run_uuids(keys))
            busy_key = next((key for key in keys if key not in taken), None)
            if busy_key is None:
                transaction.savepoint_commit(tried)
                return
        transaction.savepoint_rollback(tried)
        waited = transaction.savepoint()
        if busy_text is not None:
            lock_run_texts([busy_text])
        elif busy_key is not None:
            lock_run_uuids([busy_key])
        transaction.savepoint_rollback(waited)


# A deletion can only turn flags off. A runId whose own runs are now fewer than two (read
# two at most: ``LIMIT 2``, decided once a runId, as ``_MARK_TEXTS`` decides) has its
# flagged runs unflagged: its one own run left, if any (a placeholder is never flagged).
# A UUID runId's runs by its key (catalog_run_uuid_job_uniq), a text runId's by its text
# (catalog_run_text_idx); a runId still shared is not read past its first two own runs.
_UNFLAG_UUIDS = """
WITH alone AS MATERIALIZED (
    SELECT u FROM unnest(%s::uuid[]) AS u
    WHERE (
        SELECT count(*) FROM (
            SELECT 1 FROM catalog_run o WHERE o.run_uuid = u AND NOT o.is_placeholder LIMIT 2
        ) AS two
    ) < 2
)
UPDATE catalog_run r SET shares_run_id = false
FROM alone WHERE r.run_uuid = alone.u AND r.shares_run_id
"""
_UNFLAG_TEXTS = """
WITH alone AS MATERIALIZED (
    SELECT t FROM unnest(%s::text[]) AS t
    WHERE (
        SELECT count(*) FROM (
            SELECT 1 FROM catalog_run o
            WHERE md5(o.run_id_text) = md5(t) AND o.run_id_text = t AND NOT o.is_placeholder
            LIMIT 2
        ) AS two
    ) < 2
)
UPDATE catalog_run r SET shares_run_id = false
FROM alone WHERE md5(r.run_id_text) = md5(alone.t) AND r.run_id_text = alone.t
  AND r.shares_run_id
"""


def unflag_left_alone(run_ids: RunIds) -> int:
    """After runs of ``run_ids`` were deleted in this transaction: unflag the run each
    runId kept alone (no own run of another job left); returns the rows changed. Takes the
    locks (``lock_run_ids``) if the caller has not, so no batch adds a run meanwhile."""
    lock_run_ids(run_ids)
    changed = 0
    with connection.cursor() as cursor:
        if run_ids.texts:
            cursor.execute(_UNFLAG_TEXTS, [run_ids.texts])
            changed += cursor.rowcount
        if run_ids.uuids:
            cursor.execute(_UNFLAG_UUIDS, [run_ids.uuids])
            changed += cursor.rowcount
    return changed


# The next ``batch`` flagged runs by run_uuid (catalog_run_shared_idx holds them alone).
_FLAGGED_SPAN = """
SELECT run_uuid, run_id_text FROM catalog_run WHERE shares_run_id AND run_uuid > %s
ORDER BY run_uuid LIMIT %s
"""


def unflag_all_left_alone(batch: int = 10_000) -> int:
    """Unflag every run whose runId no other job's own run keeps (flags past deletions
    left, before ADR 0202: the data migration), reading the flagged runs ``batch`` a
    transaction along catalog_run_shared_idx; returns the rows changed. Idempotent: run
    again (a migration interrupted), the runs it unflagged are not read again."""
    changed, after = 0, uuid.UUID(int=0)
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_FLAGGED_SPAN, [after, batch])
            rows = cursor.fetchall()
            if not rows:
                return changed
            found = RunIds.of(rows)
            # A runId a derivation batch holds is left to it: the batch recomputes all its
            # runs before its commit. So this never waits for a batch. A text's flags are
            # written under the text's lock alone (its runs' keys are not needed).
            texts = try_lock_run_texts(found.texts)
            uuids = try_lock_run_uuids(found.uuids)
            changed += unflag_left_alone(RunIds(uuids, texts, []))
        after = rows[-1][0]

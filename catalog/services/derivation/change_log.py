"""The one writer of change records (ADR 0082, ADR 0088): ``record(rows)``.

Every change row, of every kind, is written here, inside the caller's transaction (a
derivation batch, a retirement or restore): one INSERT ... ON CONFLICT on the natural key
``(alias, before_hash, after_hash, key_hash)`` (NULLS NOT DISTINCT, so the kinds without an
alias are unique by their key_hash). A row already stored keeps its id; its evidence
(when, which event, which runs, who and why) is brought up to date when a re-derive or a
late event moved it, and that is not a new change. ``record`` answers only the rows that
were inserted, and hands them to the webhook outbox in the same transaction (ADR 0086),
whose ledger of natural keys keeps a rederive's re-inserted rows from being announced again.
"""

from collections.abc import Sequence

from django.db import connection

from catalog.models import DatasetChange
from catalog.notify import outbox

_RECORD = """
INSERT INTO catalog_dataset_change AS c
    (alias_id, dataset_id, source_id, job_id, kind, "column", old_type, new_type,
     changed_at, event_id, run_id, previous_run_id, detail, before_hash, after_hash, key_hash)
SELECT * FROM unnest(
    %(alias)s::bigint[], %(dataset)s::bigint[], %(source)s::bigint[], %(job)s::bigint[],
    %(kind)s::text[], %(column)s::text[], %(old_type)s::text[], %(new_type)s::text[],
    %(changed_at)s::timestamptz[], %(event)s::bigint[], %(run_id)s::text[],
    %(previous_run_id)s::text[], %(detail)s::text[], %(before)s::bytea[], %(after)s::bytea[],
    %(key)s::bytea[])
ON CONFLICT (alias_id, before_hash, after_hash, key_hash) DO UPDATE
SET changed_at = EXCLUDED.changed_at, event_id = EXCLUDED.event_id,
    run_id = EXCLUDED.run_id, previous_run_id = EXCLUDED.previous_run_id,
    detail = EXCLUDED.detail, old_type = EXCLUDED.old_type, new_type = EXCLUDED.new_type
WHERE (c.changed_at, c.event_id, c.run_id, c.previous_run_id, c.detail, c.old_type, c.new_type)
    IS DISTINCT FROM (EXCLUDED.changed_at, EXCLUDED.event_id, EXCLUDED.run_id,
    EXCLUDED.previous_run_id, EXCLUDED.detail, EXCLUDED.old_type, EXCLUDED.new_type)
RETURNING c.id, c.alias_id, c.before_hash, c.after_hash, c.key_hash, c.xmax = 0
"""


def delete(rows: list[DatasetChange]) -> None:
    """Delete stored change rows that no longer hold, those whose key this transaction
    holds (a row another writer holds is left to it: it recomputes the same answer)."""
    held = uncontended(sorted(rows, key=natural_key))
    if held:
        DatasetChange.objects.filter(id__in=[row.pk for row in held]).delete()


def natural_key(row: DatasetChange) -> tuple[int, bytes, bytes, bytes]:
    """A row's natural key (0 for no alias), the order rows are written in."""
    return (row.alias_id or 0, bytes(row.before_hash), bytes(row.after_hash), bytes(row.key_hash))


# Each key's transaction-level try-lock: a key another transaction is writing right now is
# left to it. Waiting for its row (the unique index makes an insert of the same key wait)
# while holding a run's lock deadlocked two derive batches of one run, each holding what
# the other wanted. The change is a function of what is stored, so the writer holding the
# key records the same row; if it rolls back, its retry (or the next batch touching the
# run, or a rederive) records it.
_TRY_KEYS = """
SELECT n FROM unnest(%(keys)s::text[]) WITH ORDINALITY AS t(k, n)
WHERE pg_try_advisory_xact_lock(hashtextextended(k, 8808)) ORDER BY n
"""


def uncontended(ordered: list[DatasetChange]) -> list[DatasetChange]:
    """Of ``ordered`` (in key order), the rows whose key this transaction now holds: every
    write of a change row (insert, evidence update, delete) takes it first."""
    if not ordered:
        return []
    keys = [f"{a}:{b.hex()}:{c.hex()}:{d.hex()}" for a, b, c, d in map(natural_key, ordered)]
    with connection.cursor() as cursor:
        cursor.execute(_TRY_KEYS, {"keys": keys})
        return [ordered[row[0] - 1] for row in cursor.fetchall()]


def record(rows: Sequence[DatasetChange]) -> list[DatasetChange]:
    """Insert the change rows that are not stored yet and update the evidence of those that
    are; the rows that were new, with their ids. Call it inside the writer's transaction."""
    if not rows:
        return []
    # One row per key (the last wins), in key order: two writers lock in the same order.
    by_key = {natural_key(row): row for row in rows}
    ordered = uncontended([by_key[key] for key in sorted(by_key)])
    if not ordered:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _RECORD,
            {
                "alias": [row.alias_id for row in ordered],
                "dataset": [row.dataset_id for row in ordered],
                "source": [row.source_id for row in ordered],
                "job": [row.job_id for row in ordered],
                "kind": [str(row.kind) for row in ordered],
                "column": [row.column for row in ordered],
                "old_type": [row.old_type for row in ordered],
                "new_type": [row.new_type for row in ordered],
                "changed_at": [row.changed_at for row in ordered],
                "event": [row.event_id for row in ordered],
                "run_id": [row.run_id for row in ordered],
                "previous_run_id": [row.previous_run_id for row in ordered],
                "detail": [row.detail for row in ordered],
                "before": [bytes(row.before_hash) for row in ordered],
                "after": [bytes(row.after_hash) for row in ordered],
                "key": [bytes(row.key_hash) for row in ordered],
            },
        )
        written = cursor.fetchall()
    new = []
    for row_id, alias_id, before, after, key, inserted in written:
        if inserted:
            row = by_key[(alias_id or 0, bytes(before), bytes(after), bytes(key))]
            row.pk = row_id
            new.append(row)
    outbox.enqueue(new)
    return new

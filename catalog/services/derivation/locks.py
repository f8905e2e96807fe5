"""How derivation takes row locks, and in which order (ADR 0049).

A batch is one transaction in two parts. Its *free part* writes only rows no other batch
writes at the same time, and never waits for another batch; its *contended part* folds
the batch into the aggregate rows every batch of a stream shares, and takes their locks
in one global order, so two workers wait for each other instead of deadlocking, and while
one is in its contended part the other does its free part (two workers settle out of
phase, and derive nearly twice as much as one as long as the contended part is no longer
than the free part).

Free part:
1. Events: claimed with ``FOR NO KEY UPDATE SKIP LOCKED``.
2. Jobs and aliases the batch names: ids read without a lock (an id never changes), and
   only the missing ones inserted (``ids_by_key_hash``). Only a name two batches insert
   at once makes the second wait, once.
3. Runs the batch only names (another run's parent, none of its events in the batch):
   ids read, placeholders inserted if missing, no lock (``ensure_referenced_runs``).
4. Other runs: the transaction lock of each text runId (``try_lock_run_texts``, sorted,
   without waiting; ADR 0201), then of each runId (``try_lock_run_uuids``, sorted, without
   waiting) of the runs whose text was taken or is a UUID; the runs of the runIds taken,
   their run rows (``locked``) and their per-run rows (datasets read/written, column
   facts, run facts); the events' dataset and metadata rows.
Contended part, each kind in key order, the kinds in this sequence:
5. Runs whose runId lock another batch held (``lock_run_texts``, sorted texts, then
   ``lock_run_uuids``, sorted UUIDs, waiting), then as in 4. Nothing contended is held yet
   while waiting for them.
6. Jobs (id order), aggregates and facets.
7. Aliases (id order), then their datasets (id order); a merge repoints the loser's
   aliases and deletes it.
8. Job-dataset rows (job, alias, direction), then static-lineage declarations (job id
   order; their rows are only the job's, so the job's lock in 6 already serialises them).
9. Lineage edges (source, target, job), column edges (target, source, job, key), job edges
   (job, dataset, direction): upserted in key order, then folded.

Rows are locked ``FOR NO KEY UPDATE`` (``locked``), the lock an UPDATE of non-key columns
takes: it does not block the foreign-key checks (``FOR KEY SHARE``) of another batch
inserting facts that point at the same job, run, alias or edge, so those inserts stay in
its free part. A row that is only read is not locked.
"""

import uuid
from collections.abc import Callable
from typing import TypeVar

import orjson
from django.db import connection
from django.db.models import Field, Model, QuerySet

# The transaction lock of a runId (shared with run_conflicts, which takes it blocking).
RUN_UUID_LOCK = "hashtextextended(u::text, 1228)"
_TRY_LOCK_RUN_UUIDS = f"""
SELECT u FROM unnest(%s::uuid[]) WITH ORDINALITY AS t(u, n)
WHERE pg_try_advisory_xact_lock({RUN_UUID_LOCK}) ORDER BY n
"""
_LOCK_RUN_UUIDS = f"""
SELECT pg_advisory_xact_lock({RUN_UUID_LOCK})
FROM unnest(%s::uuid[]) WITH ORDINALITY AS t(u, n) ORDER BY n
"""


# The transaction lock of a text runId, whatever job sent it (its runs have a run_uuid per
# job): every run of the text is written under it, so the recompute of ``shares_run_id``
# over all its runs (run_conflicts) writes rows only their lock's holder writes. Taken
# before any runId's lock: a batch waits for texts, then for UUIDs, each in sorted order.
RUN_TEXT_LOCK = "hashtextextended(t, 1229)"
_TRY_LOCK_RUN_TEXTS = f"""
SELECT t FROM unnest(%s::text[]) WITH ORDINALITY AS s(t, n)
WHERE pg_try_advisory_xact_lock({RUN_TEXT_LOCK}) ORDER BY n
"""
_LOCK_RUN_TEXTS = f"""
SELECT pg_advisory_xact_lock({RUN_TEXT_LOCK})
FROM unnest(%s::text[]) WITH ORDINALITY AS s(t, n) ORDER BY n
"""


K = TypeVar("K")
R = TypeVar("R")
M = TypeVar("M", bound=Model)


def ids_inserting_missing(
    model: type[M],
    keys: dict[R, K],
    read: Callable[[list[R]], dict[R, int]],
    build: Callable[[R, K], M],
    remembered: Callable[[list[R]], dict[R, int]] | None = None,
) -> dict[K, int]:
    """The ids of ``model``'s rows for ``keys`` (the row's natural key → the batch's key),
    as ``read`` finds them; rows made by ``build`` are inserted first for the keys that have
    none, each with the id ``remembered`` gives its key if any (a full rederive, ADR 0077).

    It reads before it inserts. An ``INSERT ... ON CONFLICT DO NOTHING`` on a key whose row
    another batch has updated and not yet committed waits for that batch to end (the
    unique check must know whether the update commits): inserting every name each time
    made two workers take turns on the jobs and aliases every batch shares, in the free
    part (measured: a third of two workers' time in that wait). Once a stream's names are
    known, this is one SELECT.
    """
    if not keys:
        return {}
    known = read(list(keys))
    missing = [row_key for row_key in sorted(keys) if row_key not in known]  # type: ignore[type-var]
    if missing:
        ids = remembered(missing) if remembered is not None else {}
        rows = []
        for row_key in missing:
            row = build(row_key, keys[row_key])
            row.pk = ids.get(row_key)
            rows.append(row)
        # A remembered id belongs to this key only, so a conflict on it is the same row
        # inserted by another batch, as a conflict on the natural key is.
        model._default_manager.bulk_create(rows, ignore_conflicts=True)
        known.update(read(missing))
    return {keys[row_key]: row_id for row_key, row_id in known.items()}


def ids_by_key_hash(
    model: type[M],
    keys: dict[bytes, K],
    build: Callable[[bytes, K], M],
    remembered: Callable[[list[bytes]], dict[bytes, int]] | None = None,
) -> dict[K, int]:
    """``ids_inserting_missing`` for a model keyed by ``key_hash`` (jobs, aliases)."""
    return ids_inserting_missing(
        model, keys, lambda digests: _ids(model, digests), build, remembered
    )


def _ids(model: type[Model], digests: list[bytes]) -> dict[bytes, int]:
    rows = model._default_manager.filter(key_hash__in=digests).values_list("key_hash", "id")
    return {bytes(digest): row_id for digest, row_id in rows}


def locked(queryset: QuerySet) -> QuerySet:
    """``queryset`` locked in primary-key order, ``FOR NO KEY UPDATE``: the lock an UPDATE
    of non-key columns takes, which does not block another transaction's foreign-key
    check (``FOR KEY SHARE``) on the row, so a batch inserting facts that point at a job
    or an alias never waits for the batch that is updating its aggregate."""
    return queryset.order_by("pk").select_for_update(no_key=True)


def try_lock_run_uuids(run_uuids: list[uuid.UUID]) -> list[uuid.UUID]:
    """Take, without waiting, the transaction lock of each runId (sorted) that no other
    transaction holds; returns those taken."""
    if not run_uuids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_TRY_LOCK_RUN_UUIDS, [run_uuids])
        return [row[0] for row in cursor.fetchall()]


def lock_run_uuids(run_uuids: list[uuid.UUID]) -> None:
    """Take the transaction lock of each runId, in the given (sorted) order, waiting."""
    if run_uuids:
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_RUN_UUIDS, [run_uuids])


def try_lock_run_texts(texts: list[str]) -> list[str]:
    """Take, without waiting, the transaction lock of each text runId (sorted) that no
    other transaction holds; returns those taken."""
    if not texts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_TRY_LOCK_RUN_TEXTS, [texts])
        return [row[0] for row in cursor.fetchall()]


def lock_run_texts(texts: list[str]) -> None:
    """Take the transaction lock of each text runId, in the given (sorted) order, waiting."""
    if texts:
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_RUN_TEXTS, [texts])


def write_facets_if_changed(objects: list[Model], changed: set[int], fields: list[str]) -> None:
    """``bulk_update`` of ``fields``, leaving out ``facets`` on the rows not in ``changed``.

    A batch's newer events advance a facet's version far more often than its value; the
    value is the row's large (TOASTed) JSON, and an UPDATE that does not assign it keeps
    the stored value as it is instead of parsing and writing it again, under the lock.
    """
    bulk_update([obj for obj in objects if obj.pk in changed], fields)
    bulk_update(
        [obj for obj in objects if obj.pk not in changed],
        [name for name in fields if name != "facets"],
    )


def bulk_update(objects: list[Model], fields: list[str]) -> None:
    """One ``UPDATE ... FROM unnest(...)`` for many rows (Django's bulk_update builds a CASE
    per field and row, which costs more than the rest of a derivation batch).

    ``updated_at`` is set to now(); the caller holds the rows' locks (see ``locked``).
    """
    if not objects:
        return
    model = type(objects[0])
    meta = model._meta
    assignments, arrays, params = [], ["%s::bigint[]"], [[obj.pk for obj in objects]]
    names = ["id"]
    for name in fields:
        field = meta.get_field(name)
        if not isinstance(field, Field) or field.column is None:
            raise ValueError(f"{model.__name__}.{name} is not a column")  # a caller's typo
        column = field.column
        if name == "updated_at":
            assignments.append(f"{column} = now()")
            continue
        if field.get_internal_type() == "JSONField":
            arrays.append("%s::text[]")
            params.append([orjson.dumps(getattr(obj, field.attname)).decode() for obj in objects])
            assignments.append(f"{column} = v.{column}::jsonb")
        else:
            arrays.append(f"%s::{field.db_type(connection)}[]")
            params.append(
                [field.get_db_prep_save(getattr(obj, field.attname), connection) for obj in objects]
            )
            assignments.append(f"{column} = v.{column}")
        names.append(column)
    sql = (
        f"UPDATE {meta.db_table} AS t SET {', '.join(assignments)} "
        f"FROM unnest({', '.join(arrays)}) AS v({', '.join(names)}) WHERE t.id = v.id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)

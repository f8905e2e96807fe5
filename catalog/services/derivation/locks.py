"""The one way derivation takes row locks: ``SELECT ... FOR UPDATE`` in primary-key order.

Every derivation batch locks jobs, then runs, then aliases, then datasets, each in id
order, so two workers touching the same rows wait for each other instead of deadlocking.
"""

import uuid

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

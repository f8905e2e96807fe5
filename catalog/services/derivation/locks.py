"""The one way derivation takes row locks: ``SELECT ... FOR UPDATE`` in primary-key order.

Every derivation batch locks jobs, then runs, then aliases, then datasets, each in id
order, so two workers touching the same rows wait for each other instead of deadlocking.
"""

import orjson
from django.db import connection
from django.db.models import Field, Model, QuerySet


def locked(queryset: QuerySet) -> QuerySet:
    return queryset.order_by("pk").select_for_update()


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

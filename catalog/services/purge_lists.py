"""The ids a namespace purge works through, held by PostgreSQL and read back a batch at a
time (ADR 0158).

A purge held every id of the namespace in Python lists at once (its events, the rows of
each step, the rebuilt jobs' events, the retained summaries' keys), so its memory grew
with the namespace. Each list is now a temporary table of the purge's own session
(``pg_temp``: no other session sees it, and it goes with the connection, whatever stops
the command), filled by one ``INSERT ... SELECT`` and read back by keyset (``id > last
ORDER BY id LIMIT size``, an index range of its primary key), so Python holds one batch.
A step's ids are still the ones it has when the step starts, as when they were a list.
"""

import secrets
from collections.abc import Iterator
from typing import Any

from django.db import connection
from django.db.models import Model, QuerySet


class IdList:
    """Ids in a new temporary table ``pg_temp.purge_<name>_<random>``.

    A name of its own: a statement that reached another session (a pooler in transaction
    mode hands each transaction any server connection) fails on a table that session does
    not have, and can never read a list another purge left there.
    """

    def __init__(self, name: str, id_type: str = "bigint") -> None:
        self.table = f"pg_temp.purge_{name}_{secrets.token_hex(6)}"
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE {self.table} (id {id_type} PRIMARY KEY)")

    @classmethod
    def of(cls, name: str, queryset: QuerySet[Any]) -> "IdList":
        """The primary keys of ``queryset`` now, in a list named ``name``."""
        ids = cls(name, _id_type(queryset.model))
        ids.fill_from(queryset)
        return ids

    @property
    def select(self) -> str:
        """A subquery of its ids."""
        return f"SELECT id FROM {self.table}"

    def insert(self, select: str) -> str:
        """The statement that adds the ids ``select`` returns (those it has already kept
        once)."""
        return f"INSERT INTO {self.table} {select} ON CONFLICT DO NOTHING"

    def fill(self, select: str, params: Any = (), analyse: bool = False) -> int:
        """Add the ids ``select`` returns; how many were new. ``analyse`` for a list other
        statements join (autovacuum never analyses a temporary table, and the planner
        would not know its size); a list only read back by keyset needs no statistics."""
        with connection.cursor() as cursor:
            cursor.execute(self.insert(select), params)
            added = int(cursor.rowcount)
            if analyse:
                cursor.execute(f"ANALYZE {self.table}")
        return added

    def fill_from(self, queryset: QuerySet[Any]) -> int:
        """Add the primary keys of ``queryset``; how many were new."""
        return self.fill(*queryset.order_by().values("pk").query.sql_with_params())

    def count(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {self.table}")
            return int(cursor.fetchone()[0])

    def batches(self, size: int) -> Iterator[list[Any]]:
        """Its ids in order, ``size`` at a time (each read when the one before is done)."""
        last: Any = None
        while True:
            with connection.cursor() as cursor:
                if last is None:
                    cursor.execute(f"{self.select} ORDER BY id LIMIT %s", [size])
                else:
                    cursor.execute(
                        f"{self.select} WHERE id > %s ORDER BY id LIMIT %s", [last, size]
                    )
                chunk = [row[0] for row in cursor.fetchall()]
            if not chunk:
                return
            yield chunk
            last = chunk[-1]

    def drop(self) -> None:
        """Gone now rather than when the session ends."""
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE {self.table}")


def _id_type(model: type[Model]) -> str:
    """The column type of ``model``'s primary key (bigint, or uuid for deliveries)."""
    return str(model._meta.pk.rel_db_type(connection))

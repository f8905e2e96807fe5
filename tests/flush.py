"""A transactional test's flush empties the tables that hold rows (or statistics), not all 58.

After each transactional test (``django_db(transaction=True)``, ``live_server``: 159 tests),
Django's ``flush`` truncates every table of every model in one TRUNCATE and then runs
``post_migrate`` again (content types, permissions, the catalog's groups). TRUNCATE's cost
is per table (each gets new files, its indexes too): about 1.7 s of a loaded machine's time
for 58 tables, where most are empty and a test wrote to a handful. Here the flush probes
which tables hold a row (one statement) and truncates those, with CASCADE for the empty ones
that refer to them (PostgreSQL truncates a referenced table only with its referrers). What
the next test finds is what it found before: every table empty, then ``post_migrate``'s
rows, and sequences not reset (pytest-django's flush never resets them; a test that asks
for ``reset_sequences`` gets Django's flush of every table).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.commands import flush
from django.core.management.sql import sql_flush

# What the flush runs when no table holds a row: an empty list would also skip
# post_migrate (flush emits it only after statements), whose rows were there before.
NOTHING_WRITTEN = "SELECT 1"


def written_tables(connection: Any) -> list[str]:
    """The tables of Django's models that hold at least one row, or statistics.

    Statistics: ANALYZE writes a table's size into pg_class outside the transaction, so a
    test that analyzed a table left it even when its rows were rolled back, and TRUNCATE
    is what sets it back to unknown (``reltuples`` -1). Django's flush of every table did
    that after each transactional test; without it, whether a later test's plan reads a
    small table by its index or whole would depend on which tests ran before it."""
    tables = sorted(
        connection.introspection.django_table_names(only_existing=True, include_views=False)
    )
    if not tables:
        return []
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s WHERE EXISTS (SELECT FROM {quote(table)}) OR (SELECT c.reltuples >= 0"
        " FROM pg_class c WHERE c.oid = %s::regclass)"
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(probes, [value for table in tables for value in (table, quote(table))])
        return [row[0] for row in cursor.fetchall()]


def sql_flush_written(
    style: Any, connection: Any, reset_sequences: bool = True, allow_cascade: bool = False
) -> list[str]:
    """``django.core.management.sql.sql_flush`` for the tables that hold rows."""
    if reset_sequences or connection.vendor != "postgresql":
        return sql_flush(style, connection, reset_sequences, allow_cascade)
    tables = written_tables(connection)
    if not tables:
        return [NOTHING_WRITTEN]
    return connection.ops.sql_flush(style, tables, reset_sequences=False, allow_cascade=True)


@contextmanager
def written_tables_only() -> Iterator[None]:
    """Django's flush command truncating only the tables that hold rows, meanwhile."""
    original = flush.sql_flush
    flush.sql_flush = sql_flush_written
    try:
        yield
    finally:
        flush.sql_flush = original

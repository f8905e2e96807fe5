"""A transactional test's flush empties the tables that hold rows (or statistics), not all 58,
and leaves post_migrate's rows alone when the test left them as post_migrate made them.

After each transactional test (``django_db(transaction=True)``, ``live_server``: 275 tests),
Django's ``flush`` truncates every table of every model in one TRUNCATE and then runs
``post_migrate`` again (content types, permissions, the catalog's groups). TRUNCATE's cost
is per table (each gets new files, its indexes too): about 1.7 s of a loaded machine's time
for 58 tables, where most are empty and a test wrote to a handful (ADR 0137). Here the flush
probes which tables hold a row (one statement) and truncates those, with CASCADE for the
empty ones that refer to them (PostgreSQL truncates a referenced table only with its
referrers).

post_migrate's own tables hold rows after every flush, so they were truncated and refilled
after every test: about 110 ms of CPU a flush (Python's post_migrate and PostgreSQL's
TRUNCATE of four tables and their referrers), 60% of what the flushes cost (ADR 0149). So
the flush remembers what post_migrate left in each database (each table's rows, its newest
row version and its planner size, ``Fingerprint``) and, when a test left all of it so, keeps
those rows and skips post_migrate. A test that added, changed or deleted a row there, or
analyzed such a table, changed its fingerprint: that flush truncates and refills them as
before. What the next test finds is what it found before: every table empty, then
post_migrate's rows (the same rows, with their ids of before where they were kept), and
sequences not reset (pytest-django's flush never resets them; a test that asks for
``reset_sequences`` gets Django's flush of every table, and a flush without post_migrate
the written tables' alone, post_migrate's among them when they hold rows).
"""

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from django.core.management.color import no_style
from django.core.management.commands import flush
from django.core.management.sql import sql_flush
from django.db import connections

# What the flush runs when no table holds a row: an empty list would also skip
# post_migrate (flush emits it only after statements), whose rows were there before.
NOTHING_WRITTEN = "SELECT 1"

# A table's rows, its newest row version's transaction (any insert or update makes a newer
# one; a delete lowers the count) and its planner size (ANALYZE sets it, TRUNCATE unsets it).
Fingerprint = tuple[int, int | None, float]

# Per database (its NAME): post_migrate's tables and what its last run left in them.
_left_by_post_migrate: dict[str, dict[str, Fingerprint]] = {}


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


def fingerprints(connection: Any, tables: list[str]) -> dict[str, Fingerprint]:
    """Each table's ``Fingerprint``, in one statement."""
    if not tables:
        return {}
    quote = connection.ops.quote_name
    probes = " UNION ALL ".join(
        f"SELECT %s, count(*), max(xmin::text::bigint),"
        f" (SELECT c.reltuples FROM pg_class c WHERE c.oid = %s::regclass) FROM {quote(table)}"
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(probes, [value for table in tables for value in (table, quote(table))])
        return {name: (rows, newest, size) for name, rows, newest, size in cursor.fetchall()}


def cascade(connection: Any, tables: list[str]) -> set[str]:
    """What ``TRUNCATE tables CASCADE`` empties: the tables and, at any depth, every table
    with a foreign key to one of them."""
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH RECURSIVE reached(oid) AS (SELECT unnest(%s::regclass[])"
            " UNION SELECT f.conrelid FROM pg_constraint f JOIN reached r ON f.confrelid = r.oid"
            " WHERE f.contype = 'f')"
            " SELECT c.relname FROM pg_class c JOIN reached r ON r.oid = c.oid",
            [[quote(table) for table in tables]],
        )
        return {row[0] for row in cursor.fetchall()}


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


def flushed_keeping_post_migrate_rows(connection: Any) -> bool:
    """Truncate what the test wrote, keeping post_migrate's rows, when the test left those
    as post_migrate made them and no truncation reaches them; whether it did."""
    left = _left_by_post_migrate.get(connection.settings_dict["NAME"])
    if not left or fingerprints(connection, list(left)) != left:
        return False
    tables = [table for table in written_tables(connection) if table not in left]
    if tables and cascade(connection, tables) & left.keys():
        return False
    if tables:
        connection.ops.execute_sql_flush(
            connection.ops.sql_flush(no_style(), tables, reset_sequences=False, allow_cascade=True)
        )
    return True


def handle(command: Any, **options: Any) -> None:
    """Django's flush command (``djangos_handle``) truncating the written tables only,
    or, where post_migrate's rows are as it left them, keeping those and not running it."""
    connection = connections[options["database"]]
    if (
        options["interactive"]
        or options.get("reset_sequences", True)  # Django's flush's defaults
        or options.get("inhibit_post_migrate", False)
        or connection.vendor != "postgresql"
    ):
        djangos_handle(command, **options)
        return
    if flushed_keeping_post_migrate_rows(connection):
        return
    djangos_handle(command, **options)
    left = fingerprints(connection, written_tables(connection))
    _left_by_post_migrate[connection.settings_dict["NAME"]] = left


djangos_handle = flush.Command.handle


@contextmanager
def _flush_command(sql: Any, command: Any) -> Iterator[None]:
    """Django's flush command with these ``sql_flush`` and ``handle``, meanwhile."""
    before = flush.sql_flush, flush.Command.handle
    flush.sql_flush, flush.Command.handle = sql, command  # type: ignore[method-assign]
    try:
        yield
    finally:
        flush.sql_flush, flush.Command.handle = before  # type: ignore[method-assign]


def written_tables_only() -> AbstractContextManager[None]:
    """Django's flush command truncating only the tables that hold rows, and post_migrate's
    only when a test changed them, meanwhile."""
    return _flush_command(sql_flush_written, handle)


def djangos_flush() -> AbstractContextManager[None]:
    """Django's flush command as Django wrote it, meanwhile (to compare with)."""
    return _flush_command(sql_flush, djangos_handle)

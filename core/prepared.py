"""Statements prepared on kept database connections: the one place that decides when a
statement may be prepared, and the cursor that does it (ADR 0112, ADR 0119).

Django binds parameters into the SQL text on the client, so PostgreSQL parses and plans
every statement anew. For a statement of one fixed text that runs on every request (the
single-event INSERT, the dataset detail's reads), planning costs more than executing: a
statement prepared once on a connection is bound to its parameters after that, and after
five executions PostgreSQL may keep a generic plan, planned no more.

Only on a connection that is kept (``CONN_MAX_AGE`` not 0; None keeps it for good): a
connection closed after each request would prepare for one use, and ``CONN_MAX_AGE = 0``
is what docs/deploy.md asks for behind PgBouncer in transaction mode, where the next
transaction may run on a server connection without the statement. A pooler that keeps
connections but loses prepared statements between transactions needs the caller's
setting off (``LINEAGE_PREPARE_INGEST_INSERT``, ``LINEAGE_PREPARE_READS``).
"""

from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg.types.numeric import Int8

from core.compiled import CompiledRows, compile_rows

# Django opens connections with psycopg's ``prepare_threshold`` None, under which psycopg
# prepares nothing, even when asked. This threshold is one no query reaches by repetition:
# on a connection a statement was prepared on, psycopg still prepares only what asks for
# it (``prepare=True``), so every other statement is sent as before.
ONLY_WHEN_ASKED = 2**62

# PostgreSQL's message for a prepared statement whose result columns changed since.
_STALE_PLAN = "cached plan must not change result type"


class PreparingCursor(psycopg.Cursor[Any]):
    """A psycopg cursor whose statements are prepared on the connection at their first
    execution and reused after it (Django's wrapper passes no ``prepare`` argument)."""

    logged = False  # the connection logs its queries (DEBUG, CaptureQueriesContext)

    def execute(self, query: Any, params: Any = None, **options: Any) -> Any:
        try:
            result = super().execute(query, params, **{**options, "prepare": True})
        except psycopg.errors.FeatureNotSupported as error:
            if not self._replan(error):
                raise
            result = super().execute(query, params, **{**options, "prepare": True})
        if self.logged and self._query is None:
            # psycopg sets no ``_query`` when it runs a prepared statement, and Django's
            # query log reads the statement's text there (it logged None).
            self._query = self._convert_query(query, params)
        return result

    def _replan(self, error: psycopg.errors.FeatureNotSupported) -> bool:
        """After a migration changed a column a statement returns (a CharField's length, a
        type), PostgreSQL refuses to run what was prepared before it, on every connection
        that holds it. Outside a transaction the statement failed alone: the connection's
        statements are deallocated (psycopg forgets them on seeing ``DEALLOCATE ALL``) and
        the caller's is prepared anew. Inside one, the transaction is lost anyway, and its
        rollback makes psycopg deallocate them. Whether to retry."""
        if error.diag.message_primary != _STALE_PLAN:
            return False
        if self.connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            return False
        self.connection.execute("DEALLOCATE ALL")
        return True


def connection_is_kept(database: Any) -> bool:
    """Whether ``database``'s connection outlives the request (``CONN_MAX_AGE`` not 0)."""
    return database.settings_dict.get("CONN_MAX_AGE", 0) != 0


def server_binding_cursor(prepare: bool = False) -> Any:
    """A cursor that sends parameters apart from the SQL (Django's default binds them into
    the SQL text on the client), wrapped like Django's own so queries are logged and
    counted the same way. ``prepare``: the caller's setting allows it; its statements are
    then prepared when the connection is kept, and sent as before when it is not."""
    # One lookup: the ``connection`` proxy looks the connection up again on every attribute
    # (a thread-local read each): about 3% of a single-event request's CPU, profiled.
    database = connections[DEFAULT_DB_ALIAS]
    database.ensure_connection()
    # Typed as Any: django-stubs declare these wrappers' argument as a CursorWrapper, but
    # Django passes them the database driver's own cursor, as here.
    kind: type[psycopg.Cursor[Any]] = psycopg.Cursor
    if prepare and connection_is_kept(database):
        kind = PreparingCursor
        if database.connection.prepare_threshold is None:
            database.connection.prepare_threshold = ONLY_WHEN_ASKED
    raw: Any = kind(database.connection)
    if database.queries_logged:
        if isinstance(raw, PreparingCursor):
            raw.logged = True
        return database.make_debug_cursor(raw)
    return database.make_cursor(raw)


# The attribute of Django's connection wrapper (one per thread) that holds the cursor
# ``kept_cursor_rows`` keeps, with the psycopg connection it was made on.
_KEPT = "_lineage_kept_cursor"


def kept_cursor_rows(sql: str, params: Any) -> list[Any]:
    """The rows of ``sql`` run with ``params`` on a server-binding cursor kept with its
    connection, prepared on it as ``server_binding_cursor(prepare=True)`` prepares (the
    caller's setting allows it).

    Why (ADR 0131): for the single-event INSERT, making a psycopg cursor and Django's
    wrapper around it for every request took about a third of the statement's client
    instructions (219,000 per INSERT in all, 78,000 on a kept cursor, callgrind): a new
    cursor builds its adapters' context anew, a kept one reuses it while the SQL text is
    the same object. What Django's wrapper does for a statement is done here: the broken
    transaction refused, the driver's errors turned into Django's (and noted, so a broken
    connection is closed after the request). When the connection logs its queries (DEBUG,
    ``CaptureQueriesContext``) or has execute wrappers, or is not kept, the statement runs
    on a new wrapped cursor as before, so it is logged, counted and wrapped the same way.
    """
    database = connections[DEFAULT_DB_ALIAS]
    database.ensure_connection()
    if database.queries_logged or database.execute_wrappers or not connection_is_kept(database):
        with server_binding_cursor(prepare=True) as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())
    raw = database.connection
    kept = getattr(database, _KEPT, None)
    if kept is None or kept[0] is not raw:
        if raw.prepare_threshold is None:
            raw.prepare_threshold = ONLY_WHEN_ASKED
        kept = (raw, PreparingCursor(raw))
        setattr(database, _KEPT, kept)
    cursor = kept[1]
    database.validate_no_broken_transaction()
    with database.wrap_database_errors:
        cursor.execute(sql, params)
        return cursor.fetchall()


def read_cursor() -> Any:
    """The cursor of a read whose SQL text is fixed: its parameters bound on the server and
    the statement prepared on a kept connection, unless ``LINEAGE["PREPARE_READS"]`` is off
    (then Django's cursor, as every other read). Only for a statement whose generic plan
    suits every parameter: after five executions PostgreSQL may keep one plan for all of
    them (ADR 0119 checked the dataset detail's; its job links are not prepared)."""
    if not settings.LINEAGE["PREPARE_READS"]:
        return connections[DEFAULT_DB_ALIAS].cursor()  # Django's own, parameters in the text
    return server_binding_cursor(prepare=True)


def read_rows(sql: str, params: Any) -> list[Any]:
    """The rows of a read whose SQL text is fixed, as ``read_cursor`` runs it, on the
    cursor kept with its connection (``kept_cursor_rows``) rather than a new one.

    Why (ADRs 0133, 0135): a new psycopg cursor and Django's wrapper around it cost a read
    what they cost the single-event INSERT (ADR 0131); the dataset detail made three per
    request, the run page one, a graph four. A logged, wrapped or unkept connection, or
    ``LINEAGE["PREPARE_READS"]`` off, runs it on a new cursor as ``read_cursor`` does."""
    if not settings.LINEAGE["PREPARE_READS"]:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(sql, params)
            return list(cursor.fetchall())
    return kept_cursor_rows(sql, params)


# A primary key no row has (ids are positive): where it lands in a compiled statement's
# parameters is where each request's key goes.
_KEY_PLACEHOLDER = -0x4B4559  # "KEY"


class RowByKey:
    """One row of a queryset by its primary key, as a dict of the named columns: the
    queryset's statement compiled once per process and sent through ``read_cursor`` (so
    prepared on a kept connection), its values converted as the ORM converts them (a
    JSONField's text parsed). None when the queryset has no row with that key.

    Why: compiling a queryset is Python the ORM repeats for every request although the text
    differs only by the key. The dataset detail's row (three retirement subqueries and the
    anti-join that hides a retired dataset, ADR 0078) took 1.0-1.1 ms of Python to compile,
    more than PostgreSQL spent running it, and was planned anew each time (ADR 0124). What
    the queryset says (which rows a reader may see) stays the queryset's: this keeps its
    SQL, never writes it again. The key is sent as a bigint whatever its size, so one
    statement is prepared per connection."""

    def __init__(self, queryset: Any, names: tuple[str, ...]) -> None:
        self._queryset = queryset.values(*names)
        self.names = names
        self._compiled: CompiledRows | None = None

    def get(self, key: int) -> dict[str, Any] | None:
        if self._compiled is None:
            queryset = self._queryset.filter(pk=_KEY_PLACEHOLDER)
            self._compiled = compile_rows(queryset, _KEY_PLACEHOLDER)
        compiled = self._compiled
        rows = read_rows(compiled.sql, compiled.params_with(Int8(key)))
        if not rows:
            return None
        return compiled.rows(rows[:1], connections[DEFAULT_DB_ALIAS])[0]

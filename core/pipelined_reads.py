"""Several fixed-text reads that do not depend on one another, sent in one round trip
(psycopg's pipeline mode), each prepared on a kept connection as ``core.prepared.read_rows``
prepares it (ADR 0140).

Why: once their statements were prepared (ADR 0119, 0134), a read's round trip cost about
what its execution did: the Marquez graph's four node reads (the nodes' rows, the jobs' and
the datasets' facts, the column lineage into them) all take the ids the walk drew, and the
dataset detail's rows and column lineage both take the row's id, yet each waited for the
one before it. In a pipeline they are sent together and their answers read together: the
same statements, the same rows, one wait.

The cursors are kept with the connection (as ``read_rows`` keeps its one): a new psycopg
cursor builds its adapters' context anew (ADR 0131). Only where ``read_rows`` would use its
kept cursor (``LINEAGE["PREPARE_READS"]`` on, a kept connection that neither logs its
queries nor has execute wrappers): otherwise each read goes through ``read_rows`` in turn,
so it is logged, counted and wrapped as before (the tests' statement pins count them so).
"""

from collections.abc import Sequence
from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from core.prepared import ONLY_WHEN_ASKED, PreparingCursor, connection_is_kept, read_rows

# The attribute of Django's connection wrapper (one per thread) holding the cursors kept for
# pipelined reads, with the psycopg connection they were made on.
_KEPT = "_lineage_pipelined_cursors"
# PostgreSQL's message for a prepared statement whose result columns changed since (a
# migration, ADR 0127): ``PreparingCursor`` replans it when run alone.
_STALE_PLAN = "cached plan must not change result type"


def rows_together(reads: Sequence[tuple[str, Any]]) -> list[list[Any]]:
    """The rows of each ``(sql, params)`` read, in order, as ``read_rows(sql, params)`` gives
    them: in one round trip where ``read_rows`` would run on its kept cursor, else one after
    another through it."""
    database = connections[DEFAULT_DB_ALIAS]
    if len(reads) < 2 or not settings.LINEAGE["PREPARE_READS"]:
        return [read_rows(sql, params) for sql, params in reads]
    database.ensure_connection()
    if database.queries_logged or database.execute_wrappers or not connection_is_kept(database):
        return [read_rows(sql, params) for sql, params in reads]
    cursors = _cursors(database, len(reads))
    database.validate_no_broken_transaction()
    with database.wrap_database_errors:
        try:
            with database.connection.pipeline():
                for cursor, (sql, params) in zip(cursors, reads, strict=False):
                    cursor.execute(sql, params)
        except psycopg.errors.FeatureNotSupported as error:
            # A statement prepared before a migration changed its columns: run alone, the
            # kept cursor's replan applies (outside a transaction; inside, it re-raises).
            if error.diag.message_primary != _STALE_PLAN:
                raise
            return [read_rows(sql, params) for sql, params in reads]
        return [cursor.fetchall() for cursor in cursors[: len(reads)]]


def _cursors(database: Any, count: int) -> list[PreparingCursor]:
    """At least ``count`` preparing cursors kept with ``database``'s psycopg connection."""
    raw = database.connection
    kept = getattr(database, _KEPT, None)
    if kept is None or kept[0] is not raw:
        if raw.prepare_threshold is None:
            raw.prepare_threshold = ONLY_WHEN_ASKED
        kept = (raw, [])
        setattr(database, _KEPT, kept)
    cursors: list[PreparingCursor] = kept[1]
    while len(cursors) < count:
        cursors.append(PreparingCursor(raw))
    return cursors

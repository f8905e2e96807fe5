"""A list's rows for a cursor page from a statement the ORM compiled once per page shape.

Why: compiling a run page's one statement (22 columns, the parent's runId subquery, the
position, the order and the limit) cost the ORM 0.35-0.45 ms of Python on every request,
about a third of ``/runs?limit=1`` and more than PostgreSQL spent running it (ADR 0123).
For an unfiltered list the text differs between requests only in the position's value, the
direction and the page's bounds. So the statement is compiled by the ORM, from the same
queryset, the first time a shape is asked (the text is still the ORM's: no rule of the
catalog is written a second time), and later requests bind their position into it.

``KeysetRows(queryset).shape()`` stands where DRF's ``CursorPagination`` expects the list's
queryset: it answers the three things that pagination does with one (``order_by`` its
ordering, ``filter`` by one ``<column>__lt``/``__gt`` position, a slice) and reads the
slice's rows, the dicts ``queryset`` itself gives (a ``values()`` queryset).
tests/api/test_keyset_rows.py holds every shape (forward, backward, with and without a
position, an offset) to the ORM's own rows for the same page.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from django.db import connections
from psycopg.types.numeric import Int8

from core.compiled import CompiledRows, compile_rows
from core.prepared import read_rows
from core.sql_timestamps import date_style_is_iso

# Page shapes kept per list: directions x positions x page sizes x offsets that clients ask.
# A forged cursor's offset makes a new shape, so the kept ones are bounded (oldest out).
MAX_SHAPES = 256
# Compiled in the position's place and found in the parameters: no real id is negative.
_SENTINEL = -(2**62) - 12_345


class ItemWriter(Protocol):
    """Items written by PostgreSQL around a page's statement (``api.run_item_text``)."""

    def statement(self, rows_sql: str, ordering: tuple[str, ...], iso: bool) -> str: ...

    def items(
        self, fetched: list[tuple[Any, ...]], tags_of: Callable[[Any], Any]
    ) -> list[dict[str, Any]]: ...


class KeysetRows:
    """``queryset``'s (a ``values()`` queryset, ordered by an integer column) cursor pages,
    each shape's statement compiled once per process. With ``writer``, a page's rows are
    what it makes of the statement it wraps around the ORM's (``{"id", "item"}``)."""

    def __init__(self, queryset: Any, writer: ItemWriter | None = None) -> None:
        self.queryset = queryset
        self.writer = writer
        self._statements: dict[tuple[Any, ...], CompiledRows] = {}
        self._lock = threading.Lock()

    def shape(self) -> "PageShape":
        return PageShape(self)

    def rows(
        self,
        ordering: tuple[str, ...],
        lookup: tuple[str, str] | None,
        position: int | None,
        start: int,
        stop: int,
    ) -> list[dict[str, Any]]:
        key = (ordering, lookup, start, stop)
        statement = self._statements.get(key) or self._compile(key)
        connection = connections[self.queryset.db]
        if self.writer is None:
            with connection.cursor() as cursor:
                cursor.execute(statement.sql, statement.params_with(position))
                fetched = cursor.fetchall()
            return statement.rows(fetched, connection)
        # Timestamps are written as the session's DateStyle spells them (core.sql_timestamps).
        sql = self.writer.statement(statement.sql, ordering, date_style_is_iso(connection))
        # Prepared on a kept connection (its text is fixed per shape; planning the items'
        # expressions cost PostgreSQL more than running them), the position a bigint
        # whatever its size: one statement per shape. Its generic plan is the ORM's page,
        # an index scan of the primary key from the position, as its custom plans.
        bound = None if position is None else Int8(position)
        fetched = read_rows(sql, statement.params_with(bound))  # on a kept cursor, ADR 0135
        return self.writer.items(fetched, lambda tags: statement.convert("tags", tags, connection))

    def _compile(self, key: tuple[Any, ...]) -> CompiledRows:
        ordering, lookup, start, stop = key
        queryset = self.queryset.order_by(*ordering)
        placeholder = None
        if lookup is not None:
            column, comparison = lookup
            placeholder = _SENTINEL
            queryset = queryset.filter(**{f"{column}__{comparison}": _SENTINEL})
        statement = compile_rows(queryset[start:stop], placeholder)
        with self._lock:  # the web server's threads share the kept statements
            while len(self._statements) >= MAX_SHAPES:
                self._statements.pop(next(iter(self._statements)), None)
            self._statements[key] = statement
        return statement


@dataclass(frozen=True)
class PageShape:
    """What DRF's ``CursorPagination.paginate_queryset`` asks of a list's queryset, kept
    until it slices: then the rows of that page, read by ``KeysetRows``."""

    rows_of: KeysetRows
    ordering: tuple[str, ...] = ()
    lookup: tuple[str, str] | None = None
    position: int | None = None

    @property
    def model(self) -> Any:
        """The list's model, whose column checks a cursor's position (``decode_cursor``)."""
        return self.rows_of.queryset.model

    def order_by(self, *ordering: str) -> "PageShape":
        return replace(self, ordering=ordering)

    def filter(self, **position: Any) -> "PageShape":
        ((name, value),) = position.items()
        column, _, comparison = name.rpartition("__")
        if comparison not in ("lt", "gt"):
            raise ValueError(f"a cursor page filters by one position, not {name!r}")
        # decode_cursor checked it with the column's own ``clean``: an integer's text
        return replace(self, lookup=(column, comparison), position=int(value))

    def __getitem__(self, bounds: slice) -> list[dict[str, Any]]:
        return self.rows_of.rows(
            self.ordering, self.lookup, self.position, bounds.start or 0, bounds.stop
        )

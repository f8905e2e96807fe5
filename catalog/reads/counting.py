"""Pages with a ``totalCount`` that never costs a full count.

Offset pages (Marquez's) count every list: the count is exact up to ``EXACT_COUNT_CAP`` rows;
above that it is PostgreSQL's planner estimate for the same query, clamped to ``MAX_COUNT``
(an estimate is a float: 1e30 must still be an integer a bigint holds).

A page is its rows' ids; the rows themselves are read by ``Page.rows``, a chunk of ids at a
time, so that a page of rows with large facets is never in memory whole (the mount stops
reading once its answer holds ``LINEAGE_MAX_PAGE_BYTES``: api/marquez/paging.py).
"""

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson
from django.db import connection

from core.counts import clamp_count

EXACT_COUNT_CAP = 10_000

Row = TypeVar("Row")


@dataclass(frozen=True)
class Page(Generic[Row]):
    ids: list[int]
    total: int
    model: Any
    related: tuple[str, ...] = ()

    def rows(self, ids: list[int]) -> list[Row]:
        """The rows of ``ids`` (a chunk of ``self.ids``), in their order, ``related``
        selected; a row deleted since the page was read is left out."""
        found = self.model._default_manager.filter(id__in=ids).select_related(*self.related)
        by_id = {row.id: row for row in found}
        return [by_id[row_id] for row_id in ids if row_id in by_id]


def offset_page(
    queryset: Any, order: tuple[Any, ...], offset: int, limit: int, related: tuple[str, ...] = ()
) -> Page[Any]:
    """One page of ``queryset`` in ``order``: its ids (the rows are read by ``Page.rows``,
    ``related`` selected) and its total count (``total_count``, over the queryset as given:
    no joins or sort of the page's)."""
    ids = list(queryset.order_by(*order).values_list("id", flat=True)[offset : offset + limit])
    return Page(ids, total_count(queryset), queryset.model, related)


def total_count(queryset: Any) -> int:
    """Exact up to EXACT_COUNT_CAP, else the planner's row estimate (at least the cap + 1,
    at most MAX_COUNT)."""
    queryset = queryset.order_by()
    exact = queryset[: EXACT_COUNT_CAP + 1].count()
    if exact <= EXACT_COUNT_CAP:
        return int(exact)
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str | bytes):
        plan = orjson.loads(plan)
    return max(clamp_count(plan[0]["Plan"]["Plan Rows"]), EXACT_COUNT_CAP + 1)

"""Pages with a ``totalCount`` that never costs a full count.

Offset pages (Marquez's) count every list: the count is exact up to ``EXACT_COUNT_CAP`` rows;
above that it is PostgreSQL's planner estimate for the same query.
"""

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson
from django.db import connection

EXACT_COUNT_CAP = 10_000

Row = TypeVar("Row")


@dataclass(frozen=True)
class Page(Generic[Row]):
    rows: list[Row]
    total: int


def offset_page(
    queryset: Any, order: tuple[Any, ...], offset: int, limit: int, related: tuple[str, ...] = ()
) -> Page[Any]:
    """One page of ``queryset`` in ``order`` (``related`` selected) and its total count
    (``total_count``, over the queryset as given: no joins or sort of the page's)."""
    rows = queryset.select_related(*related) if related else queryset
    return Page(list(rows.order_by(*order)[offset : offset + limit]), total_count(queryset))


def total_count(queryset: Any) -> int:
    """Exact up to EXACT_COUNT_CAP, else the planner's row estimate (at least the cap + 1)."""
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
    estimate = int(plan[0]["Plan"]["Plan Rows"])
    return max(estimate, EXACT_COUNT_CAP + 1)

"""Marquez's ``limit``/``offset`` paging and ``totalCount``, without deep-page scans.

Marquez pages by offset and counts every list. Here the offset is capped (an OFFSET of n
reads n index entries first) and ``totalCount`` is exact up to ``EXACT_COUNT_CAP`` rows; above
that it is PostgreSQL's planner estimate for the same query, never a full count.
"""

from typing import Any

import orjson
from django.db import connection
from rest_framework.request import Request

from api.marquez.errors import MarquezError

DEFAULT_LIMIT = 100  # Marquez's default
MAX_LIMIT = 500
MAX_OFFSET = 10_000
EXACT_COUNT_CAP = 10_000


def _integer(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name, "")
    if raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise MarquezError(400, f"{name} must be an integer (got {raw!r}).") from None


def limit_offset(request: Request, default_limit: int = DEFAULT_LIMIT) -> tuple[int, int]:
    """``limit`` is clamped to 1-500 (Marquez clients ask for 100 or more); ``offset``
    beyond the cap is refused with a message saying how to narrow the list instead."""
    limit = min(max(_integer(request, "limit", default_limit), 1), MAX_LIMIT)
    offset = _integer(request, "offset", 0)
    if offset < 0:
        raise MarquezError(400, "offset must be 0 or more.")
    if offset > MAX_OFFSET:
        raise MarquezError(
            400,
            f"offset must be at most {MAX_OFFSET}.",
            "Deep offsets are refused so that no page costs a scan; narrow the list "
            "(a namespace, a time range) or use /api/v1/ cursors.",
        )
    return limit, offset


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

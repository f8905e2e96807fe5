"""Marquez's ``limit``/``offset`` parameters, without deep-page scans.

Marquez pages by offset and counts every list. Here the offset is capped (an OFFSET of n
reads n index entries first); ``totalCount`` is catalog.reads.counting's (exact up to its
cap, the planner's estimate above, never a full count).
"""

from rest_framework.request import Request

from api.marquez.errors import MarquezError

DEFAULT_LIMIT = 100  # Marquez's default
MAX_LIMIT = 500
MAX_OFFSET = 10_000


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

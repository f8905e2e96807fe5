"""Marquez's ``limit``/``offset`` parameters, without deep-page scans, and pages bounded
in bytes.

Marquez pages by offset and counts every list. Here the offset is capped (an OFFSET of n
reads n index entries first); ``totalCount`` is catalog.reads.counting's (exact up to its
cap, the planner's estimate above, never a full count).

A list page holds at most ``LINEAGE_MAX_PAGE_BYTES`` of items (``within_budget``), as
/api/v1/ pages do: a page of jobs or dataset versions with megabytes of facets each would
otherwise be hundreds of megabytes, built whole in the web worker. The page is shortened
(at least one item) and ``totalCount`` still counts every item, so a client that continues
at ``offset + len(items)`` reads the rest (docs/marquez.md, "Bounds").
"""

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson
from django.conf import settings
from rest_framework.request import Request

from api.marquez.errors import MarquezError
from core.rendering import JSONRenderer

DEFAULT_LIMIT = 100  # Marquez's default on its lists (their resources' @DefaultValue)
SEARCH_DEFAULT_LIMIT = 10  # Marquez's /search default (SearchResource), not its lists'
MAX_LIMIT = 500
MAX_OFFSET = 10_000
# Rows shaped at once: the first chunk is one row, each next one what the rest of the
# budget holds at the page's average item size, at most this many.
MAX_CHUNK = 100

Key = TypeVar("Key")
_renderer = JSONRenderer()


def within_budget(
    keys: Sequence[Key], shape: Callable[[list[Key]], list[Any]]
) -> list[orjson.Fragment]:
    """The items ``shape`` makes of ``keys`` (ids, or rows already read), rendered one by
    one, until the next would take the page past ``LINEAGE_MAX_PAGE_BYTES`` (the first is
    always served, however large). ``shape`` is called a chunk of keys at a time, so at
    most a chunk of shaped items and the rendered page are in memory, never a whole page
    of facets. Each item is rendered by the API's renderer and kept as bytes (an orjson
    Fragment the answer embeds as it is)."""
    budget = settings.LINEAGE["MAX_PAGE_BYTES"]
    page: list[orjson.Fragment] = []
    used = 0
    start, size = 0, 1
    while start < len(keys):
        chunk = list(keys[start : start + size])
        start += len(chunk)
        for item in shape(chunk):
            rendered = _renderer.render(item)
            if page and used + len(rendered) + 1 > budget:
                return page
            page.append(orjson.Fragment(rendered))
            used += len(rendered) + 1  # and its comma
        if page:
            size = min(MAX_CHUNK, max(1, (budget - used) // max(used // len(page), 1)))
    return page


def _integer(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name, "")
    if raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise MarquezError(400, f"{name} must be an integer (got {raw!r}).") from None


def limit_offset(request: Request, default_limit: int = DEFAULT_LIMIT) -> tuple[int, int]:
    """``limit`` is 0 or more as Marquez's ``@Min(0)`` says (0: an empty page, the count
    still given; a negative one a 400), at most 500 (larger is served 500; Marquez clients
    ask for 100 or more); ``offset`` 0 or more, and beyond the cap refused with a message
    saying how to narrow the list instead (ADR 0170)."""
    limit = _integer(request, "limit", default_limit)
    if limit < 0:
        raise MarquezError(400, "limit must be 0 or more.")
    limit = min(limit, MAX_LIMIT)
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

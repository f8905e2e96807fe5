"""Pagination: keyset cursors for every model list, a bounded offset for ranked results.

See docs/adr/0030-read-api-pagination.md. A cursor page costs the same at page 10,000 as at
page 1 because the cursor is a position in an index (``id < 12345``), never an OFFSET.
"""

from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.utils import timezone
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination, LimitOffsetPagination

from api.params import integer_within
from api.problems import bad_parameter
from api.tied_positions import TiedOrder, joined, split
from core.problems import Problem
from core.rendering import RawJSON, compact
from core.timestamps import postgresql_takes

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
# Ranked results (search) cannot be keyset-paginated; deeper pages are refused, not slow.
MAX_OFFSET = 1000
# Where the schema's examples of page links point: the API as `make run` serves it.
EXAMPLE_API = "http://127.0.0.1:8000/api/v1/"


class CursorPage(CursorPagination):
    """``?cursor=`` (opaque, from ``next``/``previous``) and ``?limit=`` (1-500, default 50).

    Views set ``cursor_ordering`` (a unique column first, so positions never tie); the
    default is newest first by primary key. A list whose first column ties orders by it and
    the id (``ordering = ("-timestamp", "-id")``) and has positions of both (api/tied_positions.py).
    """

    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = "limit"
    max_page_size = MAX_PAGE_SIZE
    ordering: str | list[str] | tuple[str, ...] = "-id"

    def get_ordering(self, request: Any, queryset: Any, view: Any) -> tuple[str, ...]:
        ordering = getattr(view, "cursor_ordering", None) or self.ordering
        return (ordering,) if isinstance(ordering, str) else tuple(ordering)

    def get_page_size(self, request: Any) -> int:
        return _page_size(request, self.page_size_query_param, self.page_size)

    def get_paginated_response_schema(self, schema: Any) -> Any:
        return _links_described(
            super().get_paginated_response_schema(schema),
            "with an opaque `cursor`",
            {"next": "events?cursor=cD0xMDQy", "previous": "events?cursor=cj0xJnA9MTA5Mw%3D%3D"},
        )

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        self._model = getattr(queryset, "model", None)
        if len(ordering := self.get_ordering(request, queryset, view)) > 1:
            queryset = TiedOrder(queryset, ordering)
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound as error:
            raise invalid_cursor() from error

    def get_paginated_response(self, data: Any) -> Any:
        return super().get_paginated_response(self.cap_bytes(data))

    def cap_bytes(self, data: Any) -> Any:
        """The page cut to ``MAX_PAGE_BYTES`` of JSON (at least one item), with ``next`` (or,
        for a page reached backwards, ``previous``) pointing at the first item left out:
        500 events of megabytes each would otherwise be one unbounded body."""
        budget = settings.LINEAGE["MAX_PAGE_BYTES"]
        items = list(data)
        # The whole page written once: its items' lengths add up to less than that, so a
        # page that fits keeps every item, as counting them one by one would (one orjson
        # call, not one per item: a deep run page's 50 were ~0.1 ms; ADR 0123).
        if _json_length(items) <= budget:
            return data
        reverse = bool(self.cursor and self.cursor.reverse)
        ordered = list(reversed(items)) if reverse else items  # nearest the cursor first
        total = kept = 0
        for item in ordered:
            total += _json_length(item)
            if kept and total > budget:
                break
            kept += 1
        if kept == len(items):
            return data
        page = list(self.page or [])
        if reverse:  # a previous page: keep the items next to the cursor, the last ones
            cut = len(items) - kept
            self.previous_position = self._get_position_from_instance(page[cut - 1], self.ordering)
            self.page, self.has_previous = page[cut:], True
            return items[cut:]
        self.next_position = self._get_position_from_instance(page[kept], self.ordering)
        self.page, self.has_next = page[:kept], True
        return items[:kept]

    def _get_position_from_instance(self, instance: Any, ordering: Any) -> str:
        if len(ordering) > 1:
            return joined(instance, tuple(ordering))
        return str(super()._get_position_from_instance(instance, ordering))

    def decode_cursor(self, request: Any) -> Cursor | None:
        """DRF's decoding, then the position checked against its column: a forged cursor
        (``p=abc`` on an integer id, a NUL, an id beyond bigint) would otherwise reach SQL
        and fail there, a 500. Checked with the model field's own ``clean``."""
        cursor = super().decode_cursor(request)
        if cursor is None:
            return cursor
        if cursor.position is None:
            # DRF reads a cursor without a position (``foo``, ``o=5``, random bytes) as the
            # first page, or an offset into it: a garbled cursor answered page 1 as if it
            # were one. Every cursor these lists serve names a position (their orderings are
            # unique); an empty ``?cursor=`` is no cursor, the first page.
            if request.query_params.get(self.cursor_query_param):
                raise invalid_cursor()
            return cursor
        position = str(cursor.position)  # DRF decodes it as text; the stubs say int
        if "\x00" in position or len(position) > 200:
            raise invalid_cursor()
        parts = split(position) if len(self.ordering) > 1 else None
        for name, value in zip(self.ordering, parts or (position,), strict=False):
            self._check_position(name.lstrip("-"), value)
        return cursor

    def _check_position(self, field_name: str, position: str) -> None:
        try:
            field = self._model._meta.get_field(field_name) if self._model else None
        except FieldDoesNotExist:
            field = None
        if field is not None:
            try:
                value = field.clean(position, None)
            except (ValidationError, ValueError, TypeError, OverflowError) as error:
                raise invalid_cursor() from error
            # A moment without its offset: every cursor served carries one (an aware
            # datetime's text); read in the server's zone it would be a guess, not a place.
            # One with an offset PostgreSQL refuses (``-23:59``) was sent to it as it is, a
            # 500 on /changes, /metadata and /events?run_id= (ADR 0198).
            if isinstance(value, datetime) and (
                timezone.is_naive(value) or not postgresql_takes(value)
            ):
                raise invalid_cursor()


def _json_length(value: Any) -> int:
    """The bytes of ``value`` as JSON, as the byte cap counts them (``_measured``).

    What orjson refuses to write (an integer beyond 64 bits, which ingest keeps exact in a
    stored event or metadata record) is counted as the renderer writes it, by DRF's encoder:
    raised here, it made the whole events page a 500 for as long as that event was on it.
    """
    try:
        return len(orjson.dumps(value, default=_measured))
    except orjson.JSONEncodeError:
        return len(compact(value))


def _measured(value: Any) -> Any:
    """What the byte cap counts for a value orjson cannot write itself: an item PostgreSQL
    wrote (``RawJSON``, the run list's, ADR 0130) as its text, anything else as its str."""
    if isinstance(value, RawJSON):
        return orjson.Fragment(value.text)
    return str(value)


class OffsetPage(LimitOffsetPagination):
    """``?limit=`` (1-500) and ``?offset=`` (at most 1000), for ranked or tiny lists."""

    default_limit = DEFAULT_PAGE_SIZE
    max_limit = MAX_PAGE_SIZE
    max_offset = MAX_OFFSET

    def get_limit(self, request: Any) -> int:
        return _page_size(request, self.limit_query_param, self.default_limit)

    def get_paginated_response_schema(self, schema: Any) -> Any:
        return _links_described(
            super().get_paginated_response_schema(schema),
            "with `limit` and `offset`",
            {"next": "search?q=orders&limit=50&offset=100", "previous": "search?q=orders&limit=50"},
        )

    def get_offset(self, request: Any) -> int:
        raw = request.query_params.get(self.offset_query_param, "0")
        try:
            offset = int(raw)
        except ValueError:
            offset = -1
        if not 0 <= offset <= self.max_offset:
            raise _bad_parameter(self.offset_query_param, f"an integer from 0 to {self.max_offset}")
        return offset


class WholeListPage(OffsetPage):
    """``?limit=`` and ``?offset=`` over a list the view holds whole (the namespaces, read
    from their summary in one statement, ADR 0121): any offset costs what the first page
    does, so none is refused. With MAX_OFFSET, a store's namespaces past the 1,500th (three
    pages of 500 from offset 1000) could not be read at all."""

    max_offset = 2**63 - 1


def _links_described(paginated: Any, query: str, examples: dict[str, str]) -> Any:
    """DRF's page schema, its ``next``/``previous`` described as this API fills them: DRF's
    examples name another service (``api.example.org/accounts``), which Swagger showed as if
    it were ours (issue 39). ``examples`` maps each link to a list and query under the API
    (cursors are DRF's base64 of ``p=<position>``, ``r=1`` for a page reached backwards)."""
    for link, example in examples.items():
        paginated["properties"][link].update(
            description=(
                f"The {link} page of the same list, on this server (the scheme, host and path "
                f"the request used, {query}); null when there is none."
            ),
            example=EXAMPLE_API + example,
        )
    return paginated


def _page_size(request: Any, parameter: str, default: int) -> int:
    size = integer_within(request.query_params.get(parameter), default, 1, MAX_PAGE_SIZE)
    if size is None:
        raise _bad_parameter(parameter, f"an integer from 1 to {MAX_PAGE_SIZE}")
    return size


def _bad_parameter(name: str, expected: str) -> Problem:
    return bad_parameter(name, f"Expected {expected}.", detail=f"`{name}` must be {expected}.")


def invalid_cursor() -> Problem:
    return Problem(
        status=400,
        slug="invalid-cursor",
        title="The cursor is not valid",
        detail="Use the `next` or `previous` link of an earlier page.",
    )

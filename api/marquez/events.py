"""Raw events, the UI's activity charts, search, tags and sources in Marquez's shapes."""

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.utils import timezone
from rest_framework.request import Request

from api.marquez import node_ids, shapes
from api.marquez.errors import MarquezError, not_found
from api.marquez.paging import SEARCH_DEFAULT_LIMIT, limit_offset, within_budget
from api.params import BadMoment, parse_moment
from catalog.reads import events as event_reads
from catalog.reads import labels as label_reads
from catalog.reads import stats
from catalog.reads.search import search_found
from core.redaction import redact
from ingest.querysets import leading_within

_TICK = timedelta(microseconds=1)
_FIRST_MOMENT = datetime.min.replace(tzinfo=UTC)


def _moment(request: Request, name: str) -> datetime | None:
    raw = request.query_params.get(name, "")
    if raw == "":
        return None  # the UI sends before=&after= when no range is picked
    try:
        return parse_moment(raw.replace(" ", "+"), dates=False)
    except BadMoment as error:
        raise MarquezError(400, f"{name} (got {raw!r}): {error}") from None


def events(request: Request, namespace: str | None = None) -> dict[str, Any]:
    """OpenLineage events as received, secrets redacted (core.redaction.redact)."""
    limit, offset = limit_offset(request)
    direction = request.query_params.get("sortDirection", "desc").lower() or "desc"
    if direction not in ("asc", "desc"):
        raise MarquezError(400, "sortDirection must be asc or desc.")
    # Marquez's range is after <= eventTime < before (OpenLineageDao): the catalog's read
    # takes both ends, so the mount asks up to the microsecond before ``before`` (the
    # finest a timestamp holds); nothing can be before the first moment there is.
    before = _moment(request, "before")
    if before is not None and before == _FIRST_MOMENT:
        return {"events": [], "totalCount": 0}
    page = event_reads.event_page(
        _moment(request, "after"),
        before - _TICK if before is not None else None,
        namespace,
        direction == "asc",
        offset,
        limit,
    )
    sized = page.sized
    budget = settings.LINEAGE["MAX_PAGE_BYTES"]
    fits = leading_within([event.payload_bytes for event in sized], budget)
    if fits < len(sized):
        # Marquez's clients page by offset (the UI asks offset=page*50): a shorter page would
        # make them skip the events left out, so the page is refused, saying what fits.
        raise MarquezError(
            400,
            f"These {len(sized)} events hold more than {budget} bytes; ask for at most "
            f"{fits} (limit={fits}).",
            "Pages of raw events are bounded in bytes (LINEAGE_MAX_PAGE_BYTES). Ask for "
            "fewer, or read /api/v1/events (cursor pages that shorten themselves) or "
            "/api/v1/events/export.",
        )
    return {
        "events": [
            redact(document) for document in event_reads.payloads([event.id for event in sized])
        ],
        "totalCount": page.total,
    }


# --- the UI's activity charts ---------------------------------------------------------


def _window(request: Request) -> tuple[str, int, ZoneInfo]:
    period = request.query_params.get("period", "DAY").upper()
    if period not in ("DAY", "WEEK"):
        raise MarquezError(400, "period must be DAY or WEEK.")
    try:
        zone = ZoneInfo(request.query_params.get("timezone") or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise MarquezError(400, "timezone must be an IANA time zone name.") from None
    # DAY: the last 24 hours by hour; WEEK: the last 7 days by day (as Marquez draws them).
    return ("hour", 24, zone) if period == "DAY" else ("day", 7, zone)


def _buckets(unit: str, count: int, zone: ZoneInfo) -> list[tuple[datetime, datetime]]:
    now = timezone.now().astimezone(zone)
    if unit == "hour":
        end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        step = timedelta(hours=1)
    else:
        end = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        step = timedelta(days=1)
    return [
        (end - step * (count - index), end - step * (count - index - 1)) for index in range(count)
    ]


def _bucket_index(bounds: list[tuple[datetime, datetime]], moment: datetime) -> int | None:
    for index, (start, end) in enumerate(bounds):
        if start <= moment < end:
            return index
    return None


def stats_lineage_events(request: Request) -> list[dict[str, Any]]:
    unit, count, zone = _window(request)
    bounds = _buckets(unit, count, zone)
    rows = event_reads.run_events_by_type(unit, zone.key, bounds[0][0], bounds[-1][1])
    answer: list[dict[str, Any]] = [
        {
            "startInterval": start.isoformat(),
            "endInterval": end.isoformat(),
            "start": 0,
            "complete": 0,
            "fail": 0,
            "abort": 0,
        }
        for start, end in bounds
    ]
    for local, event_type, number in rows:
        index = _bucket_index(bounds, local.replace(tzinfo=zone))
        key = (event_type or "").lower()
        if index is not None and key in ("start", "complete", "fail", "abort"):
            answer[index][key] += number
    return answer


def stats_assets(request: Request, asset: str) -> list[dict[str, Any]]:
    """Jobs or datasets known at the end of each interval: a running total, as Marquez's
    StatsDao answers (everything created before the window, plus each interval's new ones),
    so the UI's counter (the last interval) is how many there are. Sources: the catalog
    keeps none.

    The total is catalog/reads/stats.py's table size (exact up to its cap, the planner's estimate
    above); only rows first seen since the window opened are read, grouped per interval,
    and each interval's total is that size less what was first seen after it ended.
    """
    if asset not in ("jobs", "datasets", "sources"):
        raise not_found(f"Statistics '{asset}'")
    unit, count, zone = _window(request)
    bounds = _buckets(unit, count, zone)
    answer = [
        {"startInterval": start.isoformat(), "endInterval": end.isoformat(), "count": 0}
        for start, end in bounds
    ]
    if asset == "sources":
        return answer
    total = stats.table_sizes()[asset]
    rows = event_reads.first_seen_by(asset, unit, zone.key, bounds[0][0])
    new = [0] * count
    later = 0  # first seen after the window (an eventTime in the future)
    for local, number in rows:
        index = _bucket_index(bounds, local.replace(tzinfo=zone))
        if index is None:
            later += number
        else:
            new[index] += number
    for index in reversed(range(count)):
        answer[index]["count"] = max(total - later, 0)
        later += new[index]
    return answer


# --- search, tags, sources --------------------------------------------------------------


def search(request: Request) -> dict[str, Any]:
    """The catalog's ranked search (catalog.reads.search), answered in Marquez's result shape.

    Marquez's ``%``/``_`` wildcards are not needed by a fuzzy search: ``%`` is dropped.
    """
    query = request.query_params.get("q", "").replace("%", " ").strip()
    if not query:
        raise MarquezError(400, "q is required.")
    kind = request.query_params.get("filter", "").upper()
    if kind not in ("", "ALL", "DATASET", "JOB"):
        raise MarquezError(400, "filter must be DATASET or JOB.")
    sort = request.query_params.get("sort", "NAME").upper()
    if sort not in ("NAME", "UPDATE_AT", "UPDATED_AT"):
        raise MarquezError(400, "sort must be NAME or UPDATE_AT.")
    # The namespace, the days and the order apply to every match, then ``limit`` and
    # ``offset`` (Marquez's search has no offset: the mount pages it as its other lists);
    # ``totalCount`` counts every match, not the page (ADR 0175). Marquez's days: updated
    # before the start of ``before`` (that day itself left out), after the start of
    # ``after`` (SearchDao: ``updated_at < :before``, ``> :after``). Marquez's default
    # limit is 10 here, not its lists' 100 (ADR 0170).
    limit, offset = limit_offset(request, SEARCH_DEFAULT_LIMIT)
    found = search_found(
        query,
        limit,
        offset,
        kind.lower() if kind in ("DATASET", "JOB") else None,
        namespace=request.query_params.get("namespace") or None,
        seen_after=_day(request, "after"),
        seen_before=_day(request, "before"),
        order="name" if sort == "NAME" else "last_seen",
    )
    results = [
        {
            "type": hit.type.upper(),
            "name": hit.name,
            "namespace": hit.namespace,
            "nodeId": node_ids.node_id(hit.type, hit.namespace, hit.name),
            "updatedAt": shapes.ts(hit.last_seen),
        }
        for hit in found.hits
    ]
    return {"totalCount": found.total, "results": within_budget(results, lambda chunk: chunk)}


_YYYY_MM_DD = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _day(request: Request, name: str) -> datetime | None:
    """Marquez's search ``before``/``after``: a YYYY-MM-DD day (its ``@Pattern``: no other
    form of a date), as the moment it starts in UTC."""
    raw = request.query_params.get(name, "")
    if raw == "":
        return None
    try:
        value = date.fromisoformat(raw) if _YYYY_MM_DD.fullmatch(raw) else None
    except ValueError:  # well-formed but impossible: 2026-02-30, year 0
        value = None
    if value is None:
        raise MarquezError(400, f"{name} must be a YYYY-MM-DD date (got {raw!r}).")
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def tags(request: Request) -> dict[str, Any]:
    """The tags in use on datasets, their columns and jobs (ADR 0083) and the described
    ones, as Marquez's Tag (a name, the steward's description or null; the UI lists them
    on every page), a page by name as Marquez pages them (``limit``/``offset``).

    Marquez's Tags shape has no ``totalCount``: a client reads on until a page comes back
    short, so the page is never shortened by ``within_budget`` (which would end its reading
    early). It needs no byte budget: a name is at most 401 characters and a description
    2,000 (catalog.models.steward), so 500 tags are under 5 MB even at 4 bytes a character.
    """
    limit, offset = limit_offset(request)
    return {
        "tags": [
            {"name": name, "description": description}
            for name, description in label_reads.described_tags(offset, limit)
        ]
    }


def sources(request: Request) -> dict[str, Any]:
    return {"sources": []}


def source(request: Request, source: str) -> dict[str, Any]:
    raise not_found(f"Source '{source}'")

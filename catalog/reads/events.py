"""Raw OpenLineage events by offset page, and the activity the dashboard charts count."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from catalog.reads.counting import total_count
from ingest.kinds import OPENLINEAGE_KINDS
from ingest.models import Event
from ingest.querysets import SizedEvent, filter_given


@dataclass(frozen=True)
class EventPage:
    sized: list[SizedEvent]  # the page's events with their payload sizes, in order
    total: int


def event_page(
    after: datetime | None,
    before: datetime | None,
    job_namespace: str | None,
    ascending: bool,
    offset: int,
    limit: int,
) -> EventPage:
    """A page of OpenLineage events by event time (sizes only: ``payloads`` reads them)."""
    queryset = filter_given(
        Event.objects.filter(kind__in=OPENLINEAGE_KINDS),
        event_time__gte=after,
        event_time__lte=before,
        job_namespace=job_namespace,
    )
    order = ("event_time", "id") if ascending else ("-event_time", "-id")
    return EventPage(queryset.payload_sizes(order, offset, limit), total_count(queryset))


def payloads(event_ids: list[int]) -> Iterator[object]:
    """The events' documents as received, in the order of ``event_ids``."""
    return Event.objects.received_payloads(event_ids)


def _counts(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    # A day or a week of rows is aggregated in PostgreSQL, never loaded (the mount runs it
    # under its read timeout, catalog.reads.timeout).
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def run_events_by_type(
    unit: str, zone: str, start: datetime, end: datetime
) -> list[tuple[datetime, str, int]]:
    """Run events in [start, end) per (``unit`` in ``zone``, event type): local bucket
    start (naive), event type, count."""
    return _counts(  # type: ignore[return-value]
        "SELECT date_trunc(%(unit)s, event_time AT TIME ZONE %(zone)s), event_type, count(*) "
        "FROM ingest_event WHERE event_time >= %(start)s AND event_time < %(end)s "
        "AND kind = 'run' GROUP BY 1, 2",
        {"unit": unit, "zone": zone, "start": start, "end": end},
    )


_FIRST_SEEN_TABLES = {"jobs": "catalog_job", "datasets": "catalog_dataset"}


def first_seen_by(asset: str, unit: str, zone: str, start: datetime) -> list[tuple[datetime, int]]:
    """Jobs or datasets (``asset``) first seen since ``start``, per ``unit`` in ``zone``:
    local bucket start (naive), count."""
    table = _FIRST_SEEN_TABLES[asset]
    return _counts(  # type: ignore[return-value]
        f"SELECT date_trunc(%(unit)s, first_seen AT TIME ZONE %(zone)s), count(*) FROM {table} "
        "WHERE first_seen >= %(start)s GROUP BY 1",
        {"unit": unit, "zone": zone, "start": start},
    )

"""The raw log: /events (paginated), /events/export (NDJSON stream), /metadata, /stats."""

import json
from collections.abc import Iterator
from typing import Any

import orjson
from django.conf import settings
from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from api import params
from api.access import EVENT, METADATA
from api.base import ReadAPIView, ReadOnlyViewSet
from api.event_scan import EventPage, scan_for
from api.filters import EventFilterSet
from api.pagination import CursorPage
from api.problems import COMMON, WITH_404, bad_parameter
from api.serializers import EventDetailSerializer, EventSerializer, MetadataRecordSerializer
from catalog.models import MetadataRecord
from catalog.reads import stats
from core.redaction import is_secret_key, redact, text_redactor
from ingest.models import Event
from ingest.querysets import RUN_EVENTS_ORDER, leading_within
from ingest.views import MetadataView

EVENT_EXAMPLE = {
    "id": 1042,
    "received_at": "2026-11-01T10:00:00.120000Z",
    "kind": "run",
    "event_type": "COMPLETE",
    "event_time": "2026-11-01T10:00:00Z",
    "run_id": "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9e8f",
    "job_namespace": "airflow",
    "job_name": "etl.load_orders",
    "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/airflow",
    "derivation_status": "derived",
    "derivation_error": None,
    "derived_at": "2026-11-01T10:00:01Z",
    "payload": {"eventType": "COMPLETE", "eventTime": "2026-11-01T10:00:00Z", "...": "..."},
}


@extend_schema_view(
    list=extend_schema(
        summary="The raw event log",
        description="Newest first: by id, and with `run_id` by eventTime then id (one "
        "run's events in the order they happened; a page of them reads that page). Each item "
        "is the event as received (`payload`), with secret values redacted, plus its id, "
        "receive time and derivation status. A request filtered by `event_type`, `kind`, "
        "`job_namespace`, `job_name`, `producer`, a time, `derivation_status=derived` or "
        "`has_facet_problems=false` (without `run_id` or a dataset) reads at most 20,000 "
        "events of the log from its cursor: its page may be short, or empty, while `next` "
        "is set, and `next` continues from the last event read. Follow `next` until it is "
        "null to see every match. A `job_name`, `producer` or eventTime window that matches "
        "at most 20,000 events is answered whole, from its own index (ADR 0194).",
        responses={200: EventSerializer(many=True), **COMMON},
        examples=[OpenApiExample("event", value=EVENT_EXAMPLE, response_only=True)],
    ),
    retrieve=extend_schema(
        summary="One raw event", responses={200: EventDetailSerializer, **WITH_404}
    ),
)
class EventViewSet(ReadOnlyViewSet):
    read_permissions = (EVENT,)
    queryset = Event.objects.all()
    serializer_class = EventSerializer
    detail_serializer_class = EventDetailSerializer
    filterset_class = EventFilterSet
    pagination_class = EventPage
    event_scan = None  # set per list request by filter_queryset; read by EventPage

    @property
    def cursor_ordering(self) -> tuple[str, ...]:
        """Newest id first; one run's events (``?run_id=``) newest eventTime first, then id,
        a range of their index a page stops in (ADR 0183). Read by ``CursorPage``."""
        request = getattr(self, "request", None)
        if request is not None and request.query_params.get("run_id"):
            return RUN_EVENTS_ORDER
        return ("-id",)

    def filter_queryset(self, queryset: Any) -> Any:
        filtered = super().filter_queryset(queryset)
        if self.action == "list":
            names = EventFilterSet.base_filters
            self.event_scan = scan_for(self.request.query_params, filtered, names)
        return filtered

    def get_object(self) -> Any:
        params.row_id(self.kwargs["pk"], "event")
        return super().get_object()


# Most events sized per query; a chunk is cut earlier at LINEAGE["MAX_PAGE_BYTES"] of JSON.
EXPORT_CHUNK = 1000
EXPORT_FIRST_CHUNK = 100


def _ndjson_line(document: object) -> bytes:
    try:
        return orjson.dumps(document) + b"\n"
    except orjson.JSONEncodeError:  # integers beyond 64 bits: the stdlib writes them exactly
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _export_lines(queryset: Any) -> Iterator[bytes]:
    """Keyset chunks in (event_time, id) order, each at most ``MAX_PAGE_BYTES`` of events
    (or one event larger than that): memory bounded in bytes in Python and PostgreSQL.

    Each chunk asks PostgreSQL for the next events' sizes first (``payload_sizes``: their
    ids, then their sizes), then fetches the payloads of those that fit. The
    number sized follows the number that fitted last time (doubling up to ``EXPORT_CHUNK``),
    so large events are not sized over and over. A server-side cursor would hold a snapshot
    (and, outside a transaction, a WITH HOLD copy of the result) for as long as the client
    reads; keyset chunks hold nothing.
    """
    budget = settings.LINEAGE["MAX_PAGE_BYTES"]
    size = min(EXPORT_FIRST_CHUNK, EXPORT_CHUNK)
    last: tuple[Any, int] | None = None
    while True:
        chunk = queryset
        if last is not None:
            chunk = chunk.filter(Q(event_time__gt=last[0]) | Q(event_time=last[0], id__gt=last[1]))
        sized = chunk.payload_sizes(("event_time", "id"), 0, size)
        keep = leading_within([event.payload_bytes for event in sized], budget)
        for document in Event.objects.received_payloads([event.id for event in sized[:keep]]):
            yield _ndjson_line(redact(document))
        if keep == len(sized) < size:
            return
        last = (sized[keep - 1].event_time, sized[keep - 1].id)
        size = min(EXPORT_CHUNK, 2 * keep)


class EventExport(ReadAPIView):
    """OpenLineage out: raw RunEvents, DatasetEvents and JobEvents as NDJSON."""

    read_permissions = (EVENT,)

    @extend_schema(
        operation_id="events_export",
        summary="Export raw OpenLineage events as NDJSON",
        description=(
            "Streams the stored OpenLineage events (RunEvent, DatasetEvent, JobEvent; not "
            "edge-API or metadata records) whose eventTime is in [since, until), in eventTime "
            "order, one JSON document per line, as received with secret values redacted "
            "(docs/security.md). `manage.py backfill` and any OpenLineage consumer accept "
            "the output."
        ),
        parameters=[
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="eventTime >= since"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="eventTime < until"),
            OpenApiParameter(
                "namespace",
                str,
                description="Job namespace (Run/JobEvents) or dataset namespace (DatasetEvents).",
            ),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                response=OpenApiTypes.STR, description="One OpenLineage event per line."
            ),
            **COMMON,
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        since = params.moment(request, "since")
        until = params.moment(request, "until")
        namespace = request.query_params.get("namespace", "")
        if "\x00" in namespace:
            raise bad_parameter("namespace", "NUL characters are not allowed.")
        params.shown_as_is("namespace", namespace)  # the events' own, exported redacted
        queryset = Event.objects.openlineage_export(since, until, namespace)
        response = StreamingHttpResponse(
            _export_lines(queryset), content_type="application/x-ndjson"
        )
        response["Content-Disposition"] = 'attachment; filename="openlineage-events.ndjson"'
        return response


class MetadataPage(CursorPage):
    ordering = ("-timestamp", "-id")


def _ingest_metadata_view(request: Any, *args: Any, **kwargs: Any) -> Any:
    return MetadataView.as_view()(request, *args, **kwargs)


# The list's own parameters, and DRF's ``format`` (it chooses the renderer on every route):
# as an additionalValues filter, ``?format=json`` emptied the list and its every page.
RESERVED_METADATA_PARAMS = {
    "resource",
    "subject",
    "action",
    "since",
    "until",
    "cursor",
    "limit",
    "format",
}


class MetadataRecordList(ReadAPIView):
    """Metadata records, newest first; any extra ``key=value`` matches additionalValues.

    ``/api/v1/metadata`` is also the ingest endpoint (POST, ingest token): every method but
    GET and HEAD is handed, untouched, to ``ingest.views.MetadataView``, so this route may
    come before or after ingest's in the URLconf.
    """

    read_permissions = (METADATA,)

    pagination_class = MetadataPage

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        if request.method not in ("GET", "HEAD"):
            return _ingest_metadata_view(request, *args, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    @extend_schema(
        operation_id="metadata_list",
        summary="Search metadata records",
        description=(
            "Every parameter other than the ones listed (and `format`, which chooses the "
            "renderer) is a filter on `additionalValues`: `?model_version=7&stage=Production` "
            "returns records whose additionalValues hold both pairs. additionalValues are "
            "stored and shown with their secrets redacted, keys too: a key whose value is "
            "redacted, or a key or value that redaction would change, is a 400; filter on "
            "the key or value as the answers show it."
        ),
        parameters=[
            OpenApiParameter("resource", str),
            OpenApiParameter("subject", str),
            OpenApiParameter("action", str),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="timestamp >= since"),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="timestamp < until"),
            OpenApiParameter("cursor", str, description="From `next`/`previous`."),
            OpenApiParameter("limit", int, description="Page size, 1-500 (default 50)."),
        ],
        responses={200: MetadataRecordSerializer(many=True), **COMMON},
    )
    def get(self, request: Request) -> Response:
        values = {
            key: value
            for key, value in request.query_params.items()
            # QueryDict items are the last value of each key: a str for any query string
            if key not in RESERVED_METADATA_PARAMS and isinstance(value, str)
        }
        # The cursor is checked by the paginator, which answers invalid-cursor as on every list.
        others = [(key, value) for key, value in request.query_params.items() if key != "cursor"]
        for key, value in [*values.items(), *others]:
            if "\x00" in key or "\x00" in value:
                raise bad_parameter(key.replace("\x00", ""), "NUL characters are not allowed.")
        shown = text_redactor()
        for key, value in values.items():
            # Named in a problem as the answers show it: a 400 repeats no secret.
            name = shown(key)
            if is_secret_key(key):  # a filter on a redacted value would confirm guesses of it
                raise bad_parameter(name, "Redacted values cannot be filtered on.")
            # Keys and values are stored redacted (ADR 0179, 0187): one that redaction changes
            # matches no row derivation wrote, only a row stored before (found or not would
            # confirm a guess), so it is refused, right guess or wrong, as the event filters are.
            if name != key:
                raise bad_parameter(name, "Keys are shown redacted: filter on the key shown.")
            params.shown_as_is(name, value)
        # Shown redacted like the rest (ADR 0056): rows derived before hold them as sent.
        resource, subject, action = (
            params.shown_as_is(name, request.query_params.get(name) or "") or None
            for name in ("resource", "subject", "action")
        )
        queryset = MetadataRecord.objects.search(
            resource=resource,
            subject=subject,
            action=action,
            since=params.moment(request, "since"),
            until=params.moment(request, "until"),
            values=values or None,
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(MetadataRecordSerializer(page, many=True).data)


class StatsSerializer(serializers.Serializer):
    estimated_rows = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Rows per table: the planner's estimate (pg_class.reltuples) above "
        "counts_capped_at, an exact count below it.",
    )
    ingest_rate = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Events received in the last minute and the last hour.",
    )
    pending_events = serializers.IntegerField(help_text="Underived events (capped).")
    failed_events = serializers.IntegerField(help_text="Events whose derivation failed (capped).")
    counts_capped_at = serializers.IntegerField()
    derivation_lag_seconds = serializers.FloatField(
        allow_null=True, help_text="Age of the oldest underived event; null when none."
    )
    oldest_pending_event_id = serializers.IntegerField(allow_null=True)


class Stats(ReadAPIView):
    """Counts, ingest rate, derivation lag, underived and failed events; all bounded."""

    # Figures of the raw log and its derivation; the front page shows them to the same
    # sessions (catalog.reads.stats.may_read).
    read_permissions = stats.READ_PERMISSIONS

    @extend_schema(operation_id="stats", responses={200: StatsSerializer, **COMMON})
    def get(self, request: Request) -> Response:
        now = timezone.now()
        rate = stats.ingest_rate(now)
        backlog = stats.derivation_backlog()
        return Response(
            {
                "estimated_rows": stats.table_sizes(),
                "ingest_rate": {"last_minute": rate.last_minute, "last_hour": rate.last_hour},
                "pending_events": backlog.pending,
                "failed_events": backlog.failed,
                "counts_capped_at": backlog.cap,
                "derivation_lag_seconds": backlog.lag_seconds(now),
                "oldest_pending_event_id": backlog.oldest_pending_id,
            }
        )

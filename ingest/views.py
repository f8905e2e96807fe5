"""The ingest endpoints. Each parses its body, validates, and calls ``record_events``.

Status codes follow what OpenLineage clients expect: 201 stored, 200 already stored (or a
batch report), 4xx only for what can never be accepted, 503 when the database is away.
"""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.problems import FieldError, Problem, invalid_event
from ingest.adapters import edge_record, metadata_record
from ingest.authentication import BearerTokenAuthentication, HasIngestScope
from ingest.facet_problems import FacetProblemSerializer
from ingest.metrics import count_ingested, count_refused
from ingest.parsing import (
    JSON_TYPES,
    NDJSON_TYPES,
    limits,
    parse_json,
    parse_ndjson,
    read_body,
    require_media_type,
    too_large,
)
from ingest.services import SerialisedEvent, StoredEvent, record_events, serialise
from ingest.validation import EventRecord, validate_openlineage

Validator = Callable[[Any, str], EventRecord]


# Its own class only so that the ingest answers' OpenAPI component keeps its name (Warning).
class WarningSerializer(FacetProblemSerializer):
    pass


WARNINGS_HELP = (
    "What the event gets wrong outside its core (facets against their schemas, producer, "
    "schemaURL, eventType). The event was stored as received; present only when non-empty."
)


class StoredSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Id of the stored event (of the first copy).")
    status = serializers.ChoiceField(choices=["created", "duplicate"])
    warnings = WarningSerializer(many=True, required=False, help_text=WARNINGS_HELP)


class StoredManySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["created", "duplicate"])
    results = StoredSerializer(many=True)


# One event's answer, or an array's (``/lineage`` tolerates one, ``/edges`` takes one):
# the schema named only the first, and a client built from it refused the second.
STORED_ONE_OR_MANY = PolymorphicProxySerializer(
    component_name="StoredOneOrMany",
    serializers=[StoredSerializer, StoredManySerializer],
    resource_type_field_name=None,
)


class StoredMetadataSerializer(serializers.Serializer):
    """``/metadata``'s answer, one record or many: it was documented as ``StoredMany``,
    whose ``status`` it never held."""

    ids = serializers.ListField(child=serializers.IntegerField(), help_text="In input order.")
    results = StoredSerializer(many=True)


class BatchSummarySerializer(serializers.Serializer):
    received = serializers.IntegerField()
    successful = serializers.IntegerField()
    failed = serializers.IntegerField()
    retriable = serializers.IntegerField()
    non_retriable = serializers.IntegerField()


# In NDJSON the line's number, blank lines counted, as a line that does not parse is named.
POSITION_HELP = "Position of the event in the batch (in NDJSON its line), from 0."


class FailedEventSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text=POSITION_HELP)
    reason = serializers.CharField()
    retriable = serializers.BooleanField()


class EventWarningsSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text=POSITION_HELP)
    id = serializers.IntegerField(help_text="Id of the stored event.")
    warnings = WarningSerializer(many=True)


class BatchResultSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["success", "partial_success"])
    summary = BatchSummarySerializer()
    failed_events = FailedEventSerializer(many=True)
    warnings = EventWarningsSerializer(
        many=True,
        help_text="Stored events with problems outside their core, one entry per event "
        "(paths relative to the event).",
    )


class ProblemSerializer(serializers.Serializer):
    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(required=False)
    # Only the stubs see Serializer.errors here: the serializer metaclass pops declared fields.
    errors = serializers.ListField(child=serializers.DictField(), required=False)  # type: ignore[assignment]


class EdgeSerializer(serializers.Serializer):
    """Documentation of the edge payload; validation is done by ``ingest.adapters``."""

    source_table = serializers.CharField(help_text="e.g. mlflow.Production.credit_risk")
    target_table = serializers.CharField(help_text="e.g. iceberg.gold.predictions")
    lineage_type = serializers.CharField(required=False, help_text="e.g. direct, model_scoring")
    pipeline = serializers.CharField(required=False, help_text="e.g. dagster:<job>:<run id>")


class MetadataSerializer(serializers.Serializer):
    resource = serializers.CharField(required=False, help_text="Defaults to a random id.")
    subject = serializers.CharField()
    action = serializers.CharField()
    timestamp = serializers.DateTimeField(required=False, help_text="Defaults to now.")
    additionalValues = serializers.DictField(child=serializers.CharField(), required=False)


ERRORS = {
    400: OpenApiResponse(ProblemSerializer, description="Invalid: each offending field path."),
    401: OpenApiResponse(ProblemSerializer, description="No or unknown token."),
    403: OpenApiResponse(ProblemSerializer, description="Token of the wrong scope."),
    413: OpenApiResponse(ProblemSerializer, description="Body or inflated body too large."),
    415: OpenApiResponse(ProblemSerializer, description="Wrong Content-Type or encoding."),
    503: OpenApiResponse(ProblemSerializer, description="Database unavailable; retry later."),
}


def warnings_of(record: EventRecord) -> list[dict[str, Any]]:
    return [problem.as_dict() for problem in record.warnings]


def _stored_item(record: EventRecord, item: StoredEvent) -> dict[str, Any]:
    body: dict[str, Any] = {"id": item.id, "status": "created" if item.created else "duplicate"}
    if record.warnings:
        body["warnings"] = warnings_of(record)
    return body


def stored_answer(records: list[EventRecord]) -> tuple[int, dict[str, Any]]:
    """Store ``records``; (HTTP status, body): 201 when anything was new, else 200."""
    stored = record_events(records)
    count_ingested(records, stored)
    if len(stored) == 1:
        only = stored[0]
        return (201 if only.created else 200), _stored_item(records[0], only)
    results = [_stored_item(record, item) for record, item in zip(records, stored, strict=True)]
    any_created = any(item.created for item in stored)
    return (201 if any_created else 200), {
        "status": "created" if any_created else "duplicate",
        "results": results,
    }


def _check_count(documents: list[Any]) -> None:
    """``MAX_BATCH_EVENTS``, for every request that holds many events."""
    if len(documents) > limits()["MAX_BATCH_EVENTS"]:
        raise too_large(f"At most {limits()['MAX_BATCH_EVENTS']} events per batch.")


def validate_all(documents: list[Any], validate: Validator) -> list[EventRecord]:
    """All-or-nothing validation: one bad item refuses the request, naming every error.
    An empty array is refused too: there is nothing to answer "created" or "duplicate" for
    (``/edges`` answered ``[]`` 200 "duplicate"). An array is a batch, with its limit:
    uncapped, 16 MiB of edges were 375,000 of them in one INSERT and a 12 MB answer."""
    if not documents:
        raise invalid_event([FieldError("/", "the array is empty")])
    _check_count(documents)
    records: list[EventRecord] = []
    errors: list[FieldError] = []
    for index, document in enumerate(documents):
        try:
            records.append(validate(document, f"/{index}"))
        except Problem as problem:
            errors.extend(problem.errors)
    if errors:
        raise invalid_event(errors)
    return records


def json_documents(request: HttpRequest | Request) -> tuple[Any, bool]:
    """The parsed JSON body, and whether it was an array."""
    require_media_type(request, JSON_TYPES)
    document = parse_json(read_body(request))
    return document, isinstance(document, list)


def lineage_answer(request: HttpRequest | Request) -> tuple[int, dict[str, Any]]:
    """``POST /api/v1/lineage``: one event (or an array, all-or-nothing). The WSGI fast
    path calls this function too, without the view's dispatch (ingest/direct.py, ADR
    0055): ``LineageView.post`` must stay a call of it and nothing more."""
    document, is_array = json_documents(request)
    if is_array:
        return stored_answer(validate_all(document, validate_openlineage))
    return stored_answer([validate_openlineage(document)])


class IngestView(APIView):
    authentication_classes = [BearerTokenAuthentication]
    permission_classes = [HasIngestScope]
    parser_classes: list[Any] = []  # bodies are read by ingest.parsing, within its limits

    def store(self, records: list[EventRecord]) -> Response:
        status, body = stored_answer(records)
        return Response(body, status=status)


class LineageView(IngestView):
    @extend_schema(
        operation_id="post_lineage_event",
        summary="Store one OpenLineage event",
        description=(
            "The OpenLineage HTTP transport target. Accepts a RunEvent, DatasetEvent or "
            "JobEvent (an array of them is tolerated and stored all-or-nothing). "
            "`Content-Encoding: gzip` is accepted. The same event sent twice is stored once."
        ),
        tags=["ingest"],
        request={"application/json": {"type": "object", "additionalProperties": True}},
        responses={
            201: STORED_ONE_OR_MANY,
            200: OpenApiResponse(
                STORED_ONE_OR_MANY, description="The same event was already stored."
            ),
            **ERRORS,
        },
        examples=[
            OpenApiExample("Stored", value={"id": 42, "status": "created"}, response_only=True)
        ],
    )
    def post(self, request: Request) -> Response:
        status, body = lineage_answer(request)
        return Response(body, status=status)


class LineageBatchView(IngestView):
    @extend_schema(
        operation_id="post_lineage_batch",
        summary="Store a batch of OpenLineage events",
        description=(
            "A JSON array of events, or NDJSON (`application/x-ndjson`), gzip accepted. Valid "
            "events are stored even when others fail; the answer is the OpenLineage batch "
            "report with one entry per failed event."
        ),
        tags=["ingest"],
        request={
            "application/json": {"type": "array", "items": {"type": "object"}},
            "application/x-ndjson": {"type": "string"},
        },
        responses={200: BatchResultSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        media = require_media_type(request, JSON_TYPES | NDJSON_TYPES)
        body = read_body(request)
        received, accepted, positions, failed = _prepared(media, body)
        stored = record_events(accepted)
        count_ingested([event.record for event in accepted], stored)
        count_refused("unknown", len(failed))
        warnings = [
            {"index": index, "id": item.id, "warnings": warnings_of(event.record)}
            for index, event, item in zip(positions, accepted, stored, strict=True)
            if event.record.warnings
        ]
        return Response(
            {
                "status": "partial_success" if failed else "success",
                "summary": {
                    "received": received,
                    "successful": len(accepted),
                    "failed": len(failed),
                    "retriable": 0,
                    "non_retriable": len(failed),
                },
                "failed_events": failed,
                "warnings": warnings,
            }
        )


def _prepared(
    media: str, body: bytes
) -> tuple[int, list[SerialisedEvent], list[int], list[dict[str, Any]]]:
    """How many events the batch holds, its events as stored with their positions (in
    NDJSON their lines, from 0), and its refusals (``failed_events``)."""
    if media in NDJSON_TYPES:
        documents, numbers = parse_ndjson(body, limits()["MAX_BATCH_EVENTS"])
    else:
        documents = parse_json(body)
        if not isinstance(documents, list):
            raise invalid_event([FieldError("/", "a batch must be a JSON array of events")])
        numbers = list(range(len(documents)))
    _check_count(documents)
    accepted: list[SerialisedEvent] = []
    positions: list[int] = []
    failed: list[dict[str, Any]] = []
    # Read once: a settings lookup per event was 1.5% of a batch's GIL-held time.
    limit = limits()["MAX_EVENT_BYTES"]
    for index, document in zip(numbers, documents, strict=True):
        try:
            event = serialise(validate_openlineage(document, f"/{index}"))
            if event.size > limit:  # ``oversized``, the limit read once
                raise too_large(f"The event is larger than {limit} bytes.")
            accepted.append(event)
            positions.append(index)
        except Problem as problem:
            failed.append({"index": index, "reason": _reason(problem), "retriable": False})
    return len(documents), accepted, positions, failed


def _reason(problem: Problem) -> str:
    if not problem.errors:
        return problem.detail or problem.title
    return "; ".join(f"{error.path}: {error.message}" for error in problem.errors[:20])


class EdgeView(IngestView):
    @extend_schema(
        operation_id="post_lineage_edge",
        summary="Store a simple lineage edge",
        description=(
            "The edge pipelines post from their success path, e.g. "
            "`mlflow.Production.credit_risk` → `iceberg.gold.predictions` with pipeline "
            "`dagster:<job>:<run id>`. An array of edges is stored all-or-nothing."
        ),
        tags=["ingest"],
        request=EdgeSerializer,
        responses={201: STORED_ONE_OR_MANY, 200: STORED_ONE_OR_MANY, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        document, is_array = json_documents(request)
        if is_array:
            return self.store(validate_all(document, edge_record))
        return self.store([edge_record(document)])


class MetadataView(IngestView):
    @extend_schema(
        operation_id="post_metadata",
        summary="Store generic metadata/audit records",
        description=(
            "One MetadataModel record or an array: resource (default: a random id), subject, "
            "action, timestamp (default: now), additionalValues (string → string)."
        ),
        tags=["ingest"],
        request=MetadataSerializer,
        responses={201: StoredMetadataSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        document, is_array = json_documents(request)
        if is_array:
            records = validate_all(document, metadata_record)
        else:
            records = [metadata_record(document)]
        stored = record_events(records)
        count_ingested(records, stored)
        return Response(
            {
                "ids": [item.id for item in stored],
                "results": [
                    {"id": item.id, "status": "created" if item.created else "duplicate"}
                    for item in stored
                ],
            },
            status=201,
        )

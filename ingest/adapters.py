"""Adapters that turn the two non-OpenLineage payloads into storable events.

``/api/v1/lineage/edges`` takes the simple edge pipelines post from their success path;
``/api/v1/metadata`` takes generic audit/ML metadata records (the collector's
``MetadataModel``). Both are stored in the raw log like any other event, so they are kept
forever, deduplicated the same way, and derived by the same workers.
"""

import uuid
from datetime import UTC, datetime
from typing import Any

from core.problems import FieldError, invalid_event
from core.timestamps import parse_timestamp
from ingest.models import EventKind
from ingest.pointers import token
from ingest.validation import EventRecord

EDGE_PRODUCER = "urn:lineage-catalog:edge-api"
METADATA_PRODUCER = "urn:lineage-catalog:metadata-api"


def _required_string(payload: dict[str, Any], key: str, base: str, errors: list[FieldError]) -> Any:
    value = payload.get(key)
    if not isinstance(value, str) or not value.strip():
        errors.append(FieldError(f"{base}/{key}", "is required and must be a non-empty string"))
        return None
    return value


def _optional_string(payload: dict[str, Any], key: str, base: str, errors: list[FieldError]) -> Any:
    value = payload.get(key)
    if value is not None and not isinstance(value, str):
        errors.append(FieldError(f"{base}/{key}", f"must be a string, not {type(value).__name__}"))
        return None
    return value


def edge_record(payload: Any, base: str = "", now: datetime | None = None) -> EventRecord:
    """Validate ``{"source_table", "target_table", "lineage_type", "pipeline"}``."""
    errors: list[FieldError] = []
    if not isinstance(payload, dict):
        raise invalid_event([FieldError(base or "/", "an edge must be a JSON object")])
    _required_string(payload, "source_table", base, errors)
    _required_string(payload, "target_table", base, errors)
    _optional_string(payload, "lineage_type", base, errors)
    pipeline = _optional_string(payload, "pipeline", base, errors)
    if errors:
        raise invalid_event(errors, "The edge is not valid; see errors.")
    return EventRecord(
        kind=EventKind.EDGE,
        payload=payload,
        event_time=now or datetime.now(tz=UTC),
        job_name=pipeline,
        producer=EDGE_PRODUCER,
    )


def metadata_record(
    payload: Any, base: str = "", now: datetime | None = None, *, fill_timestamp: bool = True
) -> EventRecord:
    """Validate a MetadataModel record and fill its defaults (resource id, timestamp).

    ``fill_timestamp`` False: a record without ``timestamp`` keeps none in its payload (its
    event time is still ``now``), for a Kafka message with no time of its own, whose
    redelivery must be the same record (ingest/kafka/messages.py)."""
    errors: list[FieldError] = []
    if not isinstance(payload, dict):
        raise invalid_event([FieldError(base or "/", "a metadata record must be a JSON object")])
    _required_string(payload, "subject", base, errors)
    _required_string(payload, "action", base, errors)
    resource = _optional_string(payload, "resource", base, errors)
    timestamp = payload.get("timestamp")
    moment = now or datetime.now(tz=UTC)
    if timestamp is not None:
        parsed = parse_timestamp(timestamp)
        if parsed is None:
            errors.append(FieldError(f"{base}/timestamp", "is not an ISO 8601 or epoch timestamp"))
        else:
            moment = parsed
    extra = payload.get("additionalValues")
    if extra is not None:
        if not isinstance(extra, dict):
            errors.append(FieldError(f"{base}/additionalValues", "must be an object"))
        else:
            for key, value in extra.items():
                if not isinstance(value, str):
                    where = f"{base}/additionalValues/{token(key)}"  # a JSON Pointer
                    errors.append(FieldError(where, "values must be strings"))
    if errors:
        raise invalid_event(errors, "The metadata record is not valid; see errors.")
    record = dict(payload)
    record["resource"] = resource or uuid.uuid4().hex
    if timestamp is not None or fill_timestamp:
        record["timestamp"] = timestamp if timestamp is not None else moment.isoformat()
    record.setdefault("additionalValues", {})
    return EventRecord(
        kind=EventKind.METADATA,
        payload=record,
        event_time=moment,
        producer=METADATA_PRODUCER,
    )

"""List items built from rows, in their serializer's shape, without the serializer.

Why: a page of 50 runs through ``RunSerializer`` cost 18 ms of CPU on a small store, about
twenty times its bare SQL: a model instance per row, then eighteen DRF fields per item, each
a few Python calls (``get_attribute``, a time zone lookup per datetime). Built here from
``.values()`` rows, the same page costs a few milliseconds (ADR 0105). The shape stays the
serializer's: it is still the view's ``serializer_class``, so the OpenAPI schema describes
these items, and tests/api/test_list_rows.py holds every item to what the serializer gives
for the same row, byte for byte once rendered, as tests/api/test_reads_snapshot.py does for
whole pages. Times are handed over as datetimes: the JSON renderer writes them as
``DateTimeField`` does (UTC, ``Z``; tests/core/test_rendering.py).
"""

from collections.abc import Mapping
from typing import Any

from api.label_serializers import OWNER_KEYS, TAG_KEYS, visible
from catalog.facets import hierarchy
from catalog.models import writes
from core.redaction import redact, redact_text


def run_item(row: dict[str, Any]) -> dict[str, Any]:
    """``RunSerializer``'s item from a row of ``RunQuerySet.list_rows``."""
    duration = row["duration"]
    parent = row["parent_uuid"]
    return {
        "run_id": str(row["run_uuid"]),
        "run_id_as_sent": redact_text(row["run_id_text"]),
        "job": {"id": row["job_id"], "namespace": row["job__namespace"], "name": row["job__name"]},
        "state": row["state"],
        "state_time": row["state_time"],
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "duration_seconds": duration.total_seconds() if duration is not None else None,
        "nominal_start_time": row["nominal_start_time"],
        "nominal_end_time": row["nominal_end_time"],
        "parent_run_id": str(parent) if parent else None,
        "error_message": row["error_message"],
        "is_streaming": row["is_streaming"],
        "is_placeholder": row["is_placeholder"],
        "tags": visible(row["tags"], TAG_KEYS),
        "shares_run_id": row["shares_run_id"],
        "first_event_time": row["first_event_time"],
        "last_event_time": row["last_event_time"],
        "lineage_edges_cut": row["lineage_edges_cut"],
    }


def run_link_item(run: Any, row: dict[str, Any]) -> dict[str, Any]:
    """``RunDatasetSerializer``'s item (a run's input or output) from a row of
    ``catalog.reads.runs.link_rows``; ``run`` decides ``attempted`` (ADR 0069)."""
    dataset = row["alias__dataset_id"]
    return {
        "dataset": None
        if dataset is None
        else {
            "id": dataset,
            "namespace": row["alias__dataset__namespace"],
            "name": row["alias__dataset__name"],
        },
        "alias": {
            "namespace": row["alias__namespace"],
            "name": row["alias__name"],
            "reason": row["alias__reason"],
        },
        "first_seen": row["first_seen"],
        "last_seen": row["last_seen"],
        "attempted": not writes.link_is_write(run, row["direction"], row["confirmed"]),
    }


def dataset_detail(
    dataset: Mapping[str, Any],
    aliases: dict[str, Any],
    fields: list[tuple[int, str, str, str]],
    related: dict[str, Any],
) -> dict[str, Any]:
    """``DatasetDetailSerializer``'s document from the dataset's row (``with_retirement``,
    the columns of ``api.views.catalog.DETAIL_ROW``),
    its first aliases (``shown``), their ``count`` and the ``url`` of them all, its fields
    (``catalog.reads.datasets.detail_rows``) and the related
    lists the view read (``producing``, ``attempting``, ``consuming``, ``column_lineage``,
    ``column_lineage_outside_schema``, ``dataset_dependencies``, ``run_facts``). The
    serializer's fields cost a third of the detail's CPU (ADR 0110); tests/api/
    test_list_rows.py holds this document to the serializer's, byte for byte once rendered."""
    facets = dataset["facets"]
    retired_at = dataset["retired_at"]
    shown = aliases["shown"]
    return {
        "id": dataset["id"],
        "namespace": dataset["namespace"],
        "name": dataset["name"],
        "description": dataset["description"],
        "tags": visible(dataset["tags"], TAG_KEYS),
        "owners": visible(dataset["owners"], OWNER_KEYS),
        "lifecycle_state": dataset["lifecycle_state"],
        "is_dropped": dataset["is_dropped"],
        "first_seen": dataset["first_seen"],
        "last_seen": dataset["last_seen"],
        "aliases": [
            {
                "namespace": namespace,
                "name": name,
                "reason": reason,
                "reason_detail": detail,
                "reason_event_id": event_id,
                "reason_rule": rule,
                "first_seen": first_seen,
                "last_seen": last_seen,
            }
            for _, namespace, name, reason, detail, event_id, rule, first_seen, last_seen in shown
        ],
        "alias_count": aliases["count"],
        "aliases_url": aliases["url"],
        "lifecycle_changed_at": dataset["lifecycle_changed_at"],
        "retired": None
        if retired_at is None
        else {
            "at": retired_at,
            "by": dataset["retired_by"],
            "reason": dataset["retired_reason"],
        },
        "facets": redact(facets),
        "fields": [
            {"ordinal": ordinal, "name": name, "type": kind, "description": description}
            for ordinal, name, kind, description in fields
        ],
        "producing_jobs": related["producing"],
        "attempting_jobs": related["attempting"],
        "consuming_jobs": related["consuming"],
        "column_lineage": related["column_lineage"],
        "column_lineage_outside_schema": related["column_lineage_outside_schema"],
        "dataset_dependencies": related["dataset_dependencies"],
        "run_facts": redact(
            [{**entry, "run_id": str(entry["run_id"])} for entry in related["run_facts"]]
        ),
        "hierarchy": redact(hierarchy.levels(facets)),
    }

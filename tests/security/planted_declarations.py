"""Issue 26's events without a run, for the planted-secret world of
test_derived_text_redaction.py (ADR 0056 x ADR 0061): a JobEvent declaring static lineage
and a DatasetEvent, and the data-quality assertions a run's input carries."""

from collections.abc import Callable
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/client/python"


def _facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"{PRODUCER}#facet", **fields}


def assertions() -> dict[str, Any]:
    """Run facts (ADR 0061): data-quality assertions an input carries."""
    return _facet(assertions=[{"assertion": "not_null", "success": True, "column": "id"}])


def planted_declarations(plant: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """A JobEvent declaring static lineage (column lineage with descriptions, a dataset-level
    dependency, the field-level form) and a DatasetEvent describing a dataset, both without
    a run, every facet passed through ``plant`` (ADR 0061)."""
    source = {"namespace": "postgres://db:5432", "name": "shop.public.orders"}
    lineage = _facet(
        fields={
            "total": {
                "transformationType": "INDIRECT",
                "transformationDescription": "sum of amounts",
                "inputFields": [
                    {
                        **source,
                        "field": "amount",
                        "transformations": [
                            {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum()"}
                        ],
                    }
                ],
            }
        },
        dataset=[
            {
                **source,
                "field": "day",
                "transformations": [
                    {"type": "INDIRECT", "subtype": "GROUP_BY", "description": "by day"}
                ],
            }
        ],
    )
    job_event = {
        "eventTime": "2026-11-29T09:00:00.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {
            "namespace": "etl",
            "name": "declared_totals",
            "facets": plant({"documentation": _facet(description="Daily totals")}),
        },
        "inputs": [{**source, "facets": {}}],
        "outputs": [
            {
                "namespace": "s3://lake",
                "name": "orders/totals",
                "facets": plant({"columnLineage": lineage}),
            }
        ],
    }
    dataset_event = {
        "eventTime": "2026-11-29T09:30:00.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "s3://lake",
            "name": "orders/described",
            "facets": plant(
                {
                    "documentation": _facet(description="Described without a run"),
                    "schema": _facet(
                        fields=[{"name": "id", "type": "BIGINT", "description": "id"}]
                    ),
                },
            ),
        },
    }
    return [job_event, dataset_event]

"""The project's own fixtures (tests/fixtures/openlineage/project, origins in SOURCES.md):
load, ingest and derive them through the real paths."""

from pathlib import Path
from typing import Any

import orjson

from catalog.services.derive import derive_events
from tests.catalog.helpers import openlineage, store

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage" / "project"


def fixture(name: str) -> dict[str, Any]:
    return orjson.loads((PROJECT / f"{name}.json").read_bytes())


def derive(*events: dict[str, Any]) -> None:
    """Ingest and derive each event in its own batch, in the order given."""
    for event in events:
        derive_events(store([openlineage(event)]))


FLINK_SNAPSHOT_RUN = "0193a7c2-5f1e-7b3a-9c4d-2e8f6a1b0c99"
FLINK_TOPIC = "kafka://kafka-cluster-prod:9092"


def flink_snapshots() -> list[dict[str, Any]]:
    """The Flink stream's START and two checkpoints (flink_streaming_*.json) as a second
    deployment, an hour later, whose job says COMPLETE_SNAPSHOT and whose output carries
    column lineage: the START and first checkpoint map ``id`` and ``version`` from
    ``input1``, the second checkpoint reads ``input2`` and maps both fields from it."""
    names = (
        "flink_streaming_start",
        "flink_streaming_checkpoint_1",
        "flink_streaming_checkpoint_2",
    )
    events = []
    for name in names:
        event = fixture(name)
        event["run"]["runId"] = FLINK_SNAPSHOT_RUN
        event["eventTime"] = event["eventTime"].replace("T10:", "T11:")
        pattern = event["job"]["facets"]["jobType"]["emissionPattern"]
        pattern["eventContentMode"] = "COMPLETE_SNAPSHOT"
        source = event["inputs"][0]["name"]
        output = event["outputs"][0]
        output["facets"]["columnLineage"] = {
            "_producer": event["producer"],
            "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/"
            "ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
            "fields": {
                field: {
                    "inputFields": [
                        {
                            "namespace": FLINK_TOPIC,
                            "name": source,
                            "field": field,
                            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                        }
                    ]
                }
                for field in ("id", "version")
            },
        }
        events.append(event)
    return events

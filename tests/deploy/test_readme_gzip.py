"""README "Sending lineage": the four write endpoints "All accept Content-Encoding: gzip".
The batch endpoint's gzip is tested with its NDJSON; this holds each endpoint to it, each
answered as its plain body is and stored once."""

from typing import Any

import pytest

from ingest.models import Event
from tests.ingest.helpers import post_gzip, post_json, run_event

pytestmark = pytest.mark.django_db

EDGE = {
    "source_table": "mlflow.Production.credit_risk",
    "target_table": "iceberg.gold.predictions",
    "lineage_type": "model_scoring",
    "pipeline": "dagster:score_credit:8f1c",
}
RECORD = {
    "resource": "run-7",
    "subject": "model:credit",
    "action": "promoted",
    "timestamp": "2026-11-29T09:00:00Z",
}


@pytest.mark.parametrize(
    ("url", "document", "events", "repeat"),
    [
        ("/api/v1/lineage", run_event(), 1, 200),
        ("/api/v1/lineage/batch", [run_event(), run_event()], 2, 200),
        ("/api/v1/lineage/edges", EDGE, 1, 200),
        # README: the metadata endpoint answers 201 with each record's status.
        ("/api/v1/metadata", RECORD, 1, 201),
    ],
)
def test_each_write_endpoint_accepts_a_gzip_body(
    ingest_client: Any, url: str, document: Any, events: int, repeat: int
) -> None:
    zipped = post_gzip(ingest_client, url, document)
    assert zipped.status_code in (200, 201), zipped.content  # the batch answers 200
    assert Event.objects.count() == events
    # The same document in plain JSON is the same request: a repeat, nothing stored twice.
    plain = post_json(ingest_client, url, document)
    assert plain.status_code == repeat, plain.content
    assert Event.objects.count() == events

"""The ingest answers are what the committed OpenAPI schema says they are.

The schemathesis test (tests/api/test_openapi.py) checks the read operations only; the
write side's answers were unchecked, and two were not what the schema promised: a
metadata answer (``{"ids", "results"}``) against ``StoredMany`` (``status`` required), and
the array ``/lineage`` and ``/edges`` tolerate (``{"status", "results"}``) against a single
event's ``Stored`` (``id`` required). A client generated from the schema refused them.
"""

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests import fast_yaml
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, post_json, run_event

pytestmark = pytest.mark.django_db

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
EDGE = {"source_table": "mlflow.Production.model", "target_table": "iceberg.gold.scores"}
RECORD = {"resource": "r-1", "subject": "s", "action": "a", "timestamp": "2026-01-01T00:00:00Z"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return fast_yaml.load(SCHEMA.read_text())


def _check(document: dict[str, Any], url: str, response: Any) -> None:
    answers = document["paths"][url]["post"]["responses"]
    assert str(response.status_code) in answers, response.content
    schema = answers[str(response.status_code)]["content"]["application/json"]["schema"]
    # The components beside the answer's schema, so that its "#/components/..." resolve.
    rooted = {"allOf": [schema], "components": document["components"]}
    jsonschema.validate(response.json(), rooted)


@pytest.mark.parametrize(
    ("url", "body"),
    [
        (LINEAGE, run_event),
        (LINEAGE, lambda: [run_event(), run_event()]),
        (EDGES, lambda: EDGE),
        (EDGES, lambda: [EDGE, {**EDGE, "pipeline": "dagster:p:1"}]),
        (METADATA, lambda: RECORD),
        (METADATA, lambda: [RECORD, {**RECORD, "resource": "r-2"}]),
        (BATCH, lambda: [run_event(), run_event(eventTime="never")]),
    ],
    ids=["event", "events", "edge", "edges", "record", "records", "batch"],
)
def test_new_and_repeated_answers_match_the_schema(ingest_client, document, url, body) -> None:
    sent = body()
    for _ in range(2):  # created, then duplicate
        _check(document, url, post_json(ingest_client, url, sent))

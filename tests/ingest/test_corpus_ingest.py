"""Every complete event of the corpus is stored as received; the invalid ones are refused."""

from pathlib import Path

import orjson
import pytest

from ingest.models import Event
from tests.conftest import CORPUS
from tests.ingest.corpus import corpus_files
from tests.ingest.helpers import BATCH, LINEAGE, error_paths

pytestmark = pytest.mark.django_db

FILES = corpus_files(CORPUS) if CORPUS.is_dir() else []
VALID = [f.path for f in FILES if f.parses and not f.invalid_on_purpose]
INVALID = [f.path for f in FILES if f.invalid_on_purpose]
UNPARSEABLE = [f.path for f in FILES if not f.parses]

# The field each deliberately invalid fixture gets wrong.
# Invalid on purpose, and refused: the core (here the runId) cannot be used.
EXPECTED_PATHS = {
    "fluentd-proxy/event_no_run_id.json": "/run/runId",
}
# Invalid on purpose, only in a facet: stored as received, the problem recorded (ADR 0004).
EXPECTED_WARNINGS = {
    "fluentd-proxy/event_invalid_dataset_facet.json": "/outputs/0/facets/ownership/owners/0",
    "fluentd-proxy/event_invalid_input_dataset_facet.json": (
        "/inputs/0/inputFacets/dataQualityMetrics"
    ),
    "fluentd-proxy/event_invalid_job_facet.json": "/job/facets/ownership/owners/0",
    "fluentd-proxy/event_invalid_output_dataset_facet.json": (
        "/outputs/0/outputFacets/outputStatistics/rowCount"
    ),
    "fluentd-proxy/event_invalid_run_facet.json": "/run/facets/parent/run",
}
REFUSED = [relative for relative in INVALID if relative in EXPECTED_PATHS]
STORED_WITH_WARNINGS = [relative for relative in INVALID if relative in EXPECTED_WARNINGS]


def test_corpus_selection_is_not_empty() -> None:
    assert len(VALID) > 90
    assert set(INVALID) == set(EXPECTED_PATHS) | set(EXPECTED_WARNINGS)


@pytest.mark.parametrize("relative", VALID)
def test_complete_corpus_event_is_stored_as_received(ingest_client, relative: str) -> None:
    raw = (Path(CORPUS) / relative).read_bytes()
    document = orjson.loads(raw)
    url = BATCH if isinstance(document, list) else LINEAGE
    response = ingest_client.post(url, data=raw, content_type="application/json")
    assert response.status_code in (200, 201), response.content
    documents = document if isinstance(document, list) else [document]
    stored = list(Event.objects.order_by("id"))
    assert [event.received_payload for event in stored] == documents


@pytest.mark.parametrize("relative", STORED_WITH_WARNINGS)
def test_facet_invalid_corpus_event_is_stored_with_its_warning(ingest_client, relative) -> None:
    raw = (Path(CORPUS) / relative).read_bytes()
    response = ingest_client.post(LINEAGE, data=raw, content_type="application/json")
    assert response.status_code == 201, response.content
    paths = [warning["path"] for warning in response.json()["warnings"]]
    assert EXPECTED_WARNINGS[relative] in paths
    event = Event.objects.get()
    assert event.received_payload == orjson.loads(raw)
    assert [problem["path"] for problem in event.facet_problems] == paths


@pytest.mark.parametrize("relative", REFUSED)
def test_invalid_corpus_event_is_refused_with_its_field_path(ingest_client, relative: str) -> None:
    raw = (Path(CORPUS) / relative).read_bytes()
    response = ingest_client.post(LINEAGE, data=raw, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-event"
    assert EXPECTED_PATHS[relative] in error_paths(response)
    assert not Event.objects.exists()


@pytest.mark.parametrize("relative", UNPARSEABLE)
def test_unparseable_corpus_file_is_refused_as_invalid_json(ingest_client, relative: str) -> None:
    raw = (Path(CORPUS) / relative).read_bytes()
    response = ingest_client.post(LINEAGE, data=raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-json"
    assert not Event.objects.exists()

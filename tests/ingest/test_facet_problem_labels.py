"""Every warning validation records is counted under its own label in
``lineage_ingest_facet_problems_total`` (docs/ingest.md: "position:facet key, or
event:field"), never "other": the event's producer and schemaURL and a DatasetEvent's
facets container were (ADR 0189)."""

import pytest
from django.test import Client

from ingest import metrics
from ingest.validation import validate_openlineage
from tests.deploy.test_metrics import scrape, value
from tests.ingest.helpers import LINEAGE, post_json, run_event

pytestmark = pytest.mark.django_db

DATASET_EVENT = {
    "eventTime": "2026-11-29T10:00:00Z",
    "producer": "p",
    "dataset": {"namespace": "s3://lake", "name": "orders", "facets": []},
}
# One event per kind of warning validation can give outside facets' schemas.
WARNED = {
    "event:producer": run_event(producer=None),
    "event:schemaURL": run_event(schemaURL=7),
    "event:eventType": run_event(eventType="BEGIN"),
    "run:(container)": run_event(run={"runId": "r", "facets": []}),
    "job:(container)": run_event(job={"namespace": "n", "name": "j", "facets": 1}),
    "inputs:(container)": run_event(inputs=[{"namespace": "n", "name": "i", "inputFacets": 1}]),
    "outputs:(container)": run_event(outputs=[{"namespace": "n", "name": "o", "facets": 1}]),
    "dataset:(container)": DATASET_EVENT,
    "run:parent": run_event(run={"runId": "r", "facets": {"parent": {"run": 1}}}),
}


@pytest.mark.parametrize("label", sorted(WARNED))
def test_each_warning_has_a_label_of_its_own(label) -> None:
    record = validate_openlineage(WARNED[label])
    assert record.warnings
    labels = {
        metrics.bounded(metrics.problem_label(w.path, w.facet), metrics.facet_labels())
        for w in record.warnings
    }
    assert labels == {label}


def test_a_missing_producer_is_counted_as_event_producer(ingest_client) -> None:
    name = "lineage_ingest_facet_problems_total"
    before = scrape(Client())
    assert post_json(ingest_client, LINEAGE, run_event(producer=None)).status_code == 201
    after = scrape(Client())
    counted = value(after, name, facet="event:producer", skipped="false") - value(
        before, name, facet="event:producer", skipped="false"
    )
    assert counted == 1

"""The experimental ``lineage`` facet (issue 41 item 7, ADR 0094), end to end on the spec's
examples: ingested, derived, read back through the /api/v1 graph (dataset and column edges).
Off by default, it changes nothing; on, a JobEvent's facet replaces its declaration, a
RunEvent's adds to the run's lineage, and a target with no inputs is a source."""

import pytest

from catalog.models import Job, JobLineageEdge
from tests.api.project_fixtures import derive
from tests.catalog.facets.lineage_facet_world import (
    ENRICHED,
    EXTRACTED,
    JOB,
    OTHER_RUN,
    RAW,
    example,
    job_event,
    run_event,
    upstream,
)
from tests.catalog.facets.world import ok
from tests.catalog.helpers import openlineage

pytestmark = pytest.mark.django_db

MIXED = example("mixed-sources")
# Observed edges (name, observed, static) and the column edge the facet gives.
MIXED_OBSERVED = {
    ("public.orders", True, False),
    ("public.orders", "customer_id", "customer_segment"),
}


@pytest.fixture
def on(settings):
    settings.LINEAGE = {**settings.LINEAGE, "EXPERIMENTAL_LINEAGE_FACET": True}


def test_off_the_facet_is_kept_as_sent_and_changes_nothing(api):
    derive(run_event(MIXED, [RAW], [ENRICHED]))
    assert upstream(api, ENRICHED) == {("public.raw_orders", True, False)}
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    assert ok(api.get(f"/api/v1/jobs/{job.id}"))["facets"]["lineage"]["entries"] == MIXED["entries"]


def test_on_a_run_event_accumulates(api, on):
    """The facet's source joins what the event lists (the JOB source is not read); a later
    event of the run without the facet takes nothing away. The run's dataset edges are the
    facet's pairs (ADR 0102): raw_orders, listed but fed to no target, is read by the job
    (its job edge) but draws no dataset edge into enriched_orders."""
    derive(run_event(MIXED, [RAW], [ENRICHED]))
    assert upstream(api, ENRICHED) == MIXED_OBSERVED
    assert _job_inputs() == {"public.orders", "public.raw_orders"}
    derive(run_event(None, [], [ENRICHED], time="2026-03-01T10:06:00Z"))
    assert upstream(api, ENRICHED) == MIXED_OBSERVED


def test_on_a_run_event_is_idempotent_and_order_free(api, on):
    first = run_event(MIXED, [], [ENRICHED])
    second = run_event(None, [RAW], [ENRICHED], time="2026-03-01T10:06:00Z")
    derive(second, first, second, first)
    assert upstream(api, ENRICHED) == MIXED_OBSERVED
    assert _job_inputs() == {"public.orders", "public.raw_orders"}


def _job_inputs() -> set[str]:
    job = Job.objects.get(namespace=JOB[0], name=JOB[1])
    edges = JobLineageEdge.objects.filter(job=job, direction="input")
    return {edge.dataset.name for edge in edges.select_related("dataset")}


def test_on_a_job_event_replaces_the_declaration(api, on):
    """The JobEvent lists raw_orders; its facet says enriched_orders comes from orders: the
    declaration is the facet's (static edges, static column edge)."""
    derive(job_event(MIXED, [RAW], [ENRICHED]))
    assert upstream(api, ENRICHED, "static") == {
        ("public.orders", False, True),
        ("public.orders", "customer_id", "customer_segment"),
    }
    # A newer JobEvent without the facet declares what it lists again (replace semantics).
    derive(job_event(None, [RAW], [ENRICHED], time="2026-03-01T09:30:00Z"))
    assert upstream(api, ENRICHED, "static") == {("public.raw_orders", False, True)}


def test_off_a_job_event_declares_what_it_lists(api):
    derive(job_event(MIXED, [RAW], [ENRICHED]))
    assert upstream(api, ENRICHED, "static") == {("public.raw_orders", False, True)}


def test_a_target_with_no_inputs_is_a_source(api, on):
    """generator.json: extracted_data has ``inputs: []`` and only a JOB source for a field.
    Nothing feeds it; the run still wrote it (the event lists it, the proposal's implicit
    job boundary). In a JobEvent beside a fed target, no declared edge goes into it."""
    generator = example("generator")
    derive(run_event(generator, [], [EXTRACTED], run=OTHER_RUN))
    assert upstream(api, EXTRACTED) == set()
    both = {"entries": [*generator["entries"], *MIXED["entries"]]}
    derive(job_event(both, [], [EXTRACTED, ENRICHED]))
    assert upstream(api, EXTRACTED, "static") == set()
    assert ("public.orders", False, True) in upstream(api, ENRICHED, "static")


def test_the_dataset_facet_on_an_output(api, on):
    """dataset-to-dataset.json on the run's output: customers feeds it, id → customer_id."""
    derive(run_event(None, [], [ENRICHED], output_facet=example("dataset-to-dataset")))
    assert upstream(api, ENRICHED) == {
        ("public.customers", True, False),
        ("public.customers", "id", "customer_id"),
    }


BAD = [
    "text",
    [],
    {"entries": 3},
    {"entries": ["x", {"type": "DATASET"}, {"type": "DATASET", "namespace": 1, "name": "t"}]},
    {"entries": [{"type": "DATASET", "namespace": "s3://a", "name": "t", "inputs": "x"}]},
    {"entries": [{"type": "DATASET", "namespace": "s3://a", "name": "t", "fields": {"c": 3}}]},
    {"inputs": [{"type": "DATASET"}], "fields": {"c": {"inputs": [1, {"type": "JOB"}]}}},
]


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_bad_facet_warns_and_never_refuses_the_event(api, on, bad):
    event = run_event(bad, [RAW], [ENRICHED], output_facet=bad)
    record = openlineage(event)
    assert any("lineage" in warning.path for warning in record.warnings)
    derive(event)
    assert upstream(api, ENRICHED) == {("public.raw_orders", True, False)}


def test_on_a_job_event_the_facet_replaces_the_declared_column_lineage(api, on):
    """The proposal's precedence: with both, the facet wins over the output's columnLineage."""
    event = job_event(MIXED, [RAW], [ENRICHED])
    raw_field = {"namespace": RAW[0], "name": RAW[1], "field": "segment"}
    event["outputs"][0]["facets"] = {
        "columnLineage": {"fields": {"customer_segment": {"inputFields": [raw_field]}}}
    }
    derive(event)
    assert upstream(api, ENRICHED, "static") == {
        ("public.orders", False, True),
        ("public.orders", "customer_id", "customer_segment"),
    }
    # A newer JobEvent without the facet declares what it lists, column lineage included.
    event["eventTime"] = "2026-03-01T09:30:00Z"
    del event["job"]["facets"]["lineage"]
    derive(event)
    assert upstream(api, ENRICHED, "static") == {
        ("public.raw_orders", False, True),
        ("public.raw_orders", "segment", "customer_segment"),
    }

"""The Marquez graph's nodes are read as rows of the columns they show, not model instances
(ADR 0118): a row is shaped as the instance was, byte for byte.

``catalog.reads.marquez_graph.node_rows`` reads the drawn datasets and jobs (a job with its
parent's name, probed by key) in one statement; ``api.marquez.shapes`` reads a row as it
reads a ``Dataset`` or a ``Job`` (the job and dataset pages and details still give it
instances). On the snapshot store with what varies between nodes (a parent, facets with a
secret, tags on the dataset and on a field, a hidden one, a lifecycle state, a dropped
dataset, empty facets and tags), every node's shape from its row is the instance's.
"""

import pytest

from api.marquez import shapes
from catalog.models import Dataset, Job
from catalog.reads import marquez_graph
from core.rendering import JSONRenderer
from tests.api import reads_snapshot_store

pytestmark = pytest.mark.django_db

_render = JSONRenderer().render


def _vary() -> None:
    first, second, third = Job.objects.order_by("id")[:3]
    Job.objects.filter(id=second.id).update(
        parent=first,
        facets={
            "documentation": {"description": "From the facet"},
            "sourceCodeLocation": {"type": "git", "url": "https://git.example/repo"},
            "jobType": {"processingType": "STREAMING", "password": "job-secret"},
        },
        processing_type="STREAMING",
        description="",
    )
    Job.objects.filter(id=third.id).update(parent=second, facets={}, tags=[])
    Dataset.objects.filter(id=2).update(
        tags=[
            {"key": "pii", "field": "customer_email", "hidden": False},
            {"key": "masked", "field": "customer_email", "hidden": True},
            {"key": "tier", "value": "gold", "hidden": False},
        ],
        is_dropped=True,
        lifecycle_state="DROP",
        description="",
    )
    Dataset.objects.filter(id=3).update(facets={}, tags=[])


def test_rows_are_shaped_as_the_instances_were():
    reads_snapshot_store.build()
    _vary()
    dataset_ids = sorted(Dataset.objects.values_list("id", flat=True))
    job_ids = sorted(Job.objects.values_list("id", flat=True))
    rows = marquez_graph.node_rows(dataset_ids, job_ids)
    assert [row.id for row in rows.datasets] == dataset_ids
    assert [row.id for row in rows.jobs] == job_ids
    assert any(row.parent for row in rows.jobs)

    datasets = list(Dataset.objects.order_by("id"))
    jobs = list(Job.objects.select_related("parent").order_by("id"))
    as_rows = _render(shapes.datasets_data(rows.datasets))
    assert as_rows == _render(shapes.datasets_data(datasets))
    for latest in (1, shapes.LATEST_RUNS):
        shaped = _render(shapes.jobs_data(rows.jobs, latest_runs=latest))
        assert shaped == _render(shapes.jobs_data(jobs, latest_runs=latest))
        assert b"job-secret" not in shaped and b"parentJobUuid" in shaped
    assert b"s3cret" not in as_rows


def test_no_node_sends_no_statement(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert marquez_graph.node_rows([], []) == marquez_graph.NodeRows([], [])


def test_a_job_without_datasets_or_a_dataset_without_jobs_is_read():
    reads_snapshot_store.build()
    (job_id,) = Job.objects.order_by("id").values_list("id", flat=True)[:1]
    rows = marquez_graph.node_rows([], [job_id])
    assert [row.id for row in rows.jobs] == [job_id] and rows.datasets == []
    rows = marquez_graph.node_rows([1], [])
    assert [row.id for row in rows.datasets] == [1] and rows.jobs == []

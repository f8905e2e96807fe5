"""List pages never read facet columns: a Spark run's facets can be hundreds of kilobytes and
a list shows none of them (ADR 0050). Details still do."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import DatasetAlias, JobDataset, JobLineageEdge
from tests.api.conftest import results
from tests.api.factories import T0, make_dataset, make_job, make_run

pytestmark = pytest.mark.django_db

BIG = {"spark.logicalPlan": {"plan": ["node"] * 20_000}}


@pytest.fixture
def heavy():
    job = make_job("spark.job", facets=BIG)
    run = make_run(job, facets=BIG)
    dataset = make_dataset("shop.public.wide", facets=BIG)
    return job, run, dataset


def facet_columns_read(api, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = api.get(url)
    assert response.status_code == 200, response.content
    return [query["sql"] for query in queries if '"facets"' in query["sql"]]


@pytest.mark.parametrize(
    "url",
    ["/api/v1/jobs", "/api/v1/runs", "/api/v1/datasets", "/api/v1/jobs/{job}/runs"],
)
def test_lists_read_no_facets(api, heavy, url):
    job, _, _ = heavy
    url = url.format(job=job.id)
    assert results(api.get(url))  # the heavy row is on the page
    assert facet_columns_read(api, url) == []


def test_details_still_read_them(api, heavy):
    job, run, dataset = heavy
    for url in (f"/api/v1/jobs/{job.id}", f"/api/v1/runs/{run.run_uuid}"):
        assert facet_columns_read(api, url)
    assert facet_columns_read(api, f"/api/v1/datasets/{dataset.id}")


def test_a_datasets_jobs_are_read_without_their_facets(api, heavy):
    job, _, dataset = heavy
    alias = DatasetAlias.objects.filter(dataset=dataset).first()
    for direction in ("input", "output"):
        JobDataset.objects.create(
            job=job, alias=alias, direction=direction, first_seen=T0, last_seen=T0
        )
    url = f"/api/v1/datasets/{dataset.id}"
    body = api.get(url).json()
    assert [entry["job"]["name"] for entry in body["producing_jobs"]] == ["spark.job"]
    assert [entry["job"]["id"] for entry in body["consuming_jobs"]] == [job.id]
    assert not [sql for sql in facet_columns_read(api, url) if '"catalog_job"."facets"' in sql]


def test_a_datasets_jobs_are_rendered_as_their_serializer_documents(api, heavy):
    """The detail builds its job lists as dicts: the bytes must be DatasetJobSerializer's."""
    from datetime import timedelta

    from rest_framework.renderers import JSONRenderer

    from api.serializers import DatasetJobSerializer
    from api.views.catalog import _per_job
    from catalog.reads.datasets import detail_rows
    from core.rendering import JSONRenderer as ServedRenderer

    job, _, dataset = heavy
    other = make_job("other.job")
    alias = DatasetAlias.objects.filter(dataset=dataset).first()
    late = T0 + timedelta(hours=3, microseconds=123456)
    for owner, last, declared in ((job, T0, False), (other, late, True)):
        JobDataset.objects.create(
            job=owner,
            alias=alias,
            direction="output",
            first_seen=T0,
            last_seen=last,
            declared=declared,
        )
    JobLineageEdge.objects.create(
        job=job,
        dataset=dataset,
        direction="output",
        run_count=3,
        completed_run_count=2,
        first_seen=T0,
        last_seen=T0,
    )
    entries = _per_job(detail_rows(dataset.id, 10).links["output"])
    assert [(e["run_count"], e["completed_run_count"]) for e in entries] == [(3, 2), (0, 0)]
    documented = JSONRenderer().render(DatasetJobSerializer(entries, many=True).data)
    served = ServedRenderer().render(entries)
    assert served == documented
    body = api.get(f"/api/v1/datasets/{dataset.id}").json()
    assert [entry["job"]["name"] for entry in body["producing_jobs"]] == [
        "spark.job",
        "other.job",
    ]


@pytest.mark.django_db
def test_a_job_writing_two_names_of_one_dataset_is_listed_once_with_both_spans(api):
    """A merged dataset: one entry per job, first_seen the earliest, last_seen the latest,
    declared if either link is."""
    from datetime import timedelta

    from tests.api.factories import add_alias

    dataset = make_dataset("shop.public.orders")
    second = add_alias(dataset, "s3://lake", "orders")
    first = DatasetAlias.objects.filter(dataset=dataset).exclude(id=second.id).get()
    job = make_job("spark.orders")
    later = T0 + timedelta(days=2)
    for alias, seen, declared in ((first, (T0, T0), False), (second, (later, later), True)):
        JobDataset.objects.create(
            job=job,
            alias=alias,
            direction="output",
            first_seen=seen[0],
            last_seen=seen[1],
            declared=declared,
        )
    body = api.get(f"/api/v1/datasets/{dataset.id}").json()
    assert body["producing_jobs"] == [
        {
            "job": {"id": job.id, "namespace": "airflow", "name": "spark.orders"},
            "declared": True,
            "first_seen": "2026-11-01T00:00:00Z",
            "last_seen": "2026-11-03T00:00:00Z",
            "run_count": 0,
            "completed_run_count": 0,
        }
    ]

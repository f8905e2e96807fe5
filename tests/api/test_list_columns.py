"""List pages never read facet columns: a Spark run's facets can be hundreds of kilobytes and
a list shows none of them (ADR 0050). Details still do."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.conftest import results
from tests.api.factories import make_dataset, make_job, make_run

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

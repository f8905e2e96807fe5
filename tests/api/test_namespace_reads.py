"""docs/architecture.md invariant 7: the namespace lists (``/api/v1/namespaces`` and the
Marquez mount's) read the per-namespace summary PostgreSQL's triggers keep (ADR 0121), not
the job and dataset tables. Checked on the statements each list sends, so a read that
starts counting the tables again (however it is written) fails here."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Dataset, Job
from tests.api.factories import make_dataset, make_job

pytestmark = pytest.mark.django_db

TABLES = re.compile(
    r"\b(?:{})\b".format("|".join(re.escape(m._meta.db_table) for m in (Job, Dataset)))
)
LISTS = ("/api/v1/namespaces", "/marquez/api/v1/namespaces", "/marquez/api/v1/namespaces/airflow")


@pytest.mark.parametrize("url", LISTS)
def test_a_namespace_list_reads_the_summary_not_the_job_and_dataset_tables(api, url) -> None:
    make_job("load")
    make_job("etl", namespace="dagster")
    make_dataset("shop.orders")
    with CaptureQueriesContext(connection) as queries:
        response = api.get(url)
    assert response.status_code == 200, response.content
    assert "airflow" in response.content.decode()
    statements = [query["sql"] for query in queries.captured_queries]
    assert any("catalog_namespace" in sql for sql in statements), statements
    assert [sql for sql in statements if TABLES.search(sql)] == []

"""The run and dataset pages show run facts (statistics, quality metrics, assertions) and
the picture marks static lineage (issue 26 parts 5 and 7, ADR 0061)."""

import pytest
from django.test import Client

from catalog.models import Dataset, Run
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db


def test_the_run_and_dataset_pages_show_statistics_and_assertions(super_client: Client) -> None:
    derive(fixture("run_data_quality"), fixture("run_output_statistics"))
    run = Run.objects.get(job__name="quality.check_orders")
    page = super_client.get(f"/admin/catalog/run/{run.pk}/change/").content.decode()
    assert "1180 rows, 40960 bytes" in page
    assert "FAILED not_null (customer_email)" in page
    assert "<code>customer_email</code>" in page
    exported = Dataset.objects.for_alias("s3://exports", "orders/2026-03-01").get()
    page = super_client.get(f"/admin/catalog/dataset/{exported.pk}/change/").content.decode()
    assert "1180 rows, 40960 bytes, 2 files" in page


def test_the_picture_draws_declared_only_edges_dashed(super_client: Client) -> None:
    derive(fixture("job_event_orders_v1"))
    staged = Dataset.objects.for_alias("postgres://warehouse:5432", "shop.staging.stg_orders").get()
    page = super_client.get(f"/admin/catalog/dataset/{staged.pk}/change/").content.decode()
    assert page.count("lc-edge lc-edge-static") == 3  # two declared inputs, one output
    assert "declared by a JobEvent only" in page


def test_the_dataset_page_lists_declared_and_observed_column_edges(super_client: Client) -> None:
    """The page's column lineage table reads the API detail's model: a JobEvent's column
    edges say "declared", a run's say "observed" with their run count."""
    from tests.api.test_static_column_lineage_model import _declaration
    from tests.api.test_static_dataset_detail import _observed_run

    derive(_declaration(), _observed_run())
    staged = Dataset.objects.for_alias("postgres://warehouse:5432", "shop.staging.stg_orders").get()
    page = super_client.get(f"/admin/catalog/dataset/{staged.pk}/change/").content.decode()
    assert "Column lineage into it, observed and declared" in page
    assert "shop.raw.orders.id" in page  # the observed edge's source field
    assert "observed, 1 runs" in page
    assert page.count("declared (JobEvent)") >= 3  # two field edges, one dependency
    assert "(the whole dataset)" in page  # the declared dataset-level dependency

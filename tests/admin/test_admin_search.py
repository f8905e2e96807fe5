"""The admin's search boxes: any part of a name, case-insensitive, typo-tolerant, best first.

Also the Lineage explorer page (search, then the picture) and the picture on the dataset
and job pages, over HTTP as a steward sees them.
"""

import re
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from catalog.admin import search as admin_search
from tests.api.factories import add_alias, make_dataset, make_edge, make_job, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def names() -> dict[str, Any]:
    jobs = {
        name: make_job(name, namespace="airflow")
        for name in (
            "orders_daily",
            "analytics.orders_daily",
            "orders_daily_backfill",
            "reorders_daily_v2",
            "customers_weekly",
            "t1",
        )
    }
    datasets = {
        name: make_dataset(name)
        for name in ("shop.public.orders", "shop.public.orders_archive", "shop.public.t1")
    }
    # Found by a second name only.
    legacy = make_dataset("warehouse.fact_sales", namespace="hive://metastore:9083")
    add_alias(legacy, "s3://lake", "exports/Revenue_Report")
    datasets["legacy"] = legacy
    return {"jobs": jobs, "datasets": datasets}


def job_names(term: str) -> list[str]:
    from catalog.models import Job

    ids = admin_search.job_ids(term)
    by_id = {job.id: job.name for job in Job.objects.filter(id__in=ids)}
    return [by_id[pk] for pk in ids]


def dataset_names(term: str) -> list[str]:
    from catalog.models import Dataset

    ids = admin_search.dataset_ids(term)
    by_id = {dataset.id: dataset.name for dataset in Dataset.objects.filter(id__in=ids)}
    return [by_id[pk] for pk in ids]


def test_jobs_rank_whole_name_then_segment_then_prefix_then_substring(names: Any) -> None:
    found = job_names("orders_daily")
    assert found[:4] == [
        "orders_daily",  # the whole name
        "analytics.orders_daily",  # its last segment
        "orders_daily_backfill",  # a prefix
        "reorders_daily_v2",  # in the middle
    ]
    assert "customers_weekly" not in found


def test_any_part_case_insensitive(names: Any) -> None:
    assert set(job_names("DERS_dai")) == {
        "orders_daily",
        "analytics.orders_daily",
        "orders_daily_backfill",
        "reorders_daily_v2",
    }
    assert job_names("backfill") == ["orders_daily_backfill"]


def test_typos_are_forgiven_like_the_api_search(names: Any) -> None:
    assert job_names("ordres_daily")[0] in ("orders_daily", "analytics.orders_daily")
    assert "customers_weekly" in job_names("customer_weekley")


def test_short_names_are_found_as_words(names: Any) -> None:
    assert job_names("t1") == ["t1"]
    assert dataset_names("t1") == ["shop.public.t1"]


def test_datasets_by_any_alias(names: Any) -> None:
    assert dataset_names("revenue_rep") == ["warehouse.fact_sales"]
    assert dataset_names("s3://lake/exports/Revenue_Report") == ["warehouse.fact_sales"]
    assert dataset_names("orders")[:2] == ["shop.public.orders", "shop.public.orders_archive"]
    legacy = names["datasets"]["legacy"]
    assert admin_search.dataset_ids(f"#{legacy.pk}") == [legacy.pk]


def test_like_wildcards_are_literal(names: Any) -> None:
    # Unescaped, "%%%" and "___" would match every name of three characters or more.
    assert dataset_names("%%%") == []
    assert job_names("___") == []


def test_runs_by_id_prefix_and_by_their_jobs_name(names: Any) -> None:
    job = names["jobs"]["orders_daily_backfill"]
    run = make_run(job, run_uuid=uuid.UUID("3f2a9c10-1111-4222-8333-444455556666"))
    other = make_run(names["jobs"]["customers_weekly"])
    assert admin_search.run_ids("3f2a9c10")[0] == run.pk
    assert admin_search.run_ids("3F2A9C10-1111")[0] == run.pk
    assert admin_search.run_ids(str(run.run_uuid)) == [run.pk]
    assert admin_search.run_ids("backfil") == [run.pk]
    assert other.pk not in admin_search.run_ids("orders")


def test_changelists_rank_best_first(names: Any, super_client: Client) -> None:
    page = super_client.get("/admin/catalog/job/?q=orders_daily").content.decode()
    rows = re.findall(r'<th class="field-name"><a href="[^"]+">([^<]+)</a>', page)
    assert rows[:4] == [
        "orders_daily",
        "analytics.orders_daily",
        "orders_daily_backfill",
        "reorders_daily_v2",
    ]
    page = super_client.get("/admin/catalog/dataset/?q=revenue").content.decode()
    assert "warehouse.fact_sales" in page
    run = make_run(names["jobs"]["t1"])
    page = super_client.get(f"/admin/catalog/run/?q={str(run.run_uuid)[:8]}").content.decode()
    assert str(run.run_uuid) in page


def test_explorer_finds_and_draws(names: Any, steward_client: Client) -> None:
    source, target = names["datasets"]["shop.public.orders"], names["datasets"]["legacy"]
    job = names["jobs"]["orders_daily"]
    make_edge(source, target, job)
    page = steward_client.get("/admin/lineage/?q=fact_sale").content.decode()
    assert f"node=dataset:{target.pk}" in page
    page = steward_client.get(f"/admin/lineage/?q=fact&node=dataset:{target.pk}").content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="lc-lineage"' in page
    assert f'href="/admin/catalog/dataset/{source.pk}/change/"' in page
    assert f'href="/admin/catalog/job/{job.pk}/change/"' in page
    assert 'class="lc-node lc-node-dataset lc-focus"' in page
    index = steward_client.get("/admin/").content.decode()
    assert 'href="/admin/lineage/"' in index  # reachable from the index


def test_explorer_refuses_bad_nodes_clearly(names: Any, steward_client: Client) -> None:
    response = steward_client.get("/admin/lineage/?node=table:1")
    assert response.status_code == 400
    assert "expected dataset:&lt;id&gt; or job:&lt;id&gt;" in response.content.decode()
    response = steward_client.get("/admin/lineage/?node=dataset:999999")
    assert response.status_code == 404
    assert "There is no dataset:999999" in response.content.decode()


def test_explorer_needs_view_permission(db: None) -> None:
    nobody = User.objects.create_user("nobody", password="pw", is_staff=True)
    client = Client()
    client.force_login(nobody)
    assert client.get("/admin/lineage/").status_code == 403
    assert Client().get("/admin/lineage/").status_code == 302  # to the login page


def test_pages_draw_the_picture_with_their_controls(names: Any, steward_client: Client) -> None:
    source, target = names["datasets"]["shop.public.orders"], names["datasets"]["legacy"]
    job = names["jobs"]["orders_daily"]
    make_edge(source, target, job)
    page = steward_client.get(f"/admin/catalog/dataset/{target.pk}/change/").content.decode()
    assert 'id="lineage-picture"' in page
    assert f'href="/admin/catalog/job/{job.pk}/change/"' in page
    assert '<option value="2" selected>' in page  # the default depth
    page = steward_client.get(f"/admin/catalog/job/{job.pk}/change/").content.decode()
    assert 'class="lc-node lc-node-job lc-focus"' in page
    assert f'href="/admin/catalog/dataset/{target.pk}/change/"' in page
    # Controls: a refused value is named and the default drawn.
    page = steward_client.get(
        f"/admin/catalog/dataset/{target.pk}/change/?lineage_depth=9&lineage_as_of=yesterday"
    ).content.decode()
    assert "Depth must be a whole number from 1 to 5." in page
    assert "As of must be an ISO 8601 date or date-time" in page
    assert 'class="lc-lineage"' in page
    page = steward_client.get(
        f"/admin/catalog/dataset/{target.pk}/change/?lineage_direction=downstream"
    ).content.decode()
    assert f'href="/admin/catalog/dataset/{source.pk}/change/"' not in page.split("lc-lineage")[1]

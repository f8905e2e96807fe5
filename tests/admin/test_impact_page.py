"""Issue 40 item 1: the admin's Impact view of a dataset and of a schema field, with its CSV
download (ADR 0081)."""

import csv
import io

import pytest

from catalog.models import Dataset
from tests.admin.conftest import DB, LAKE

pytestmark = pytest.mark.django_db


def dataset_id(namespace: str, name: str) -> int:
    return Dataset.objects.for_alias(namespace, name).get().id


def test_the_dataset_page_links_to_its_impact_and_each_field_to_its_own(
    catalog, steward_client
) -> None:
    lake_orders = dataset_id(LAKE, "orders")
    page = steward_client.get(f"/admin/catalog/dataset/{lake_orders}/change/").content.decode()
    assert f"/admin/catalog/dataset/{lake_orders}/impact/" in page
    assert f"/admin/catalog/dataset/{lake_orders}/impact/?field=total" in page


def test_the_impact_page_lists_what_is_downstream_and_downloads_it(catalog, steward_client) -> None:
    orders = dataset_id(DB, "shop.public.orders")
    url = f"/admin/catalog/dataset/{orders}/impact/"
    response = steward_client.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    for name in ("load_orders", "legacy_load", "raw/orders_v1", "orders_report"):
        assert name in page
    assert "FAIL" in page  # the report job's last run
    download = steward_client.get(url, {"format": "csv"})
    assert download["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert {row["name"] for row in rows} >= {"load_orders", "lake.orders", "orders_report"}
    field = steward_client.get(url, {"field": "amount"})
    assert field.status_code == 200
    assert "total" in field.content.decode()  # lake/orders.total ← orders.amount


def test_bad_controls_are_named_and_an_unknown_field_is_404(catalog, steward_client) -> None:
    orders = dataset_id(DB, "shop.public.orders")
    url = f"/admin/catalog/dataset/{orders}/impact/"
    response = steward_client.get(url, {"depth": "99", "currency": "fresh"})
    assert response.status_code == 200
    assert "Depth must be" in response.content.decode()
    assert "Currency must be" in response.content.decode()
    assert steward_client.get(url, {"field": "nope"}).status_code == 404
    assert steward_client.get("/admin/catalog/dataset/999999/impact/").status_code == 404


def test_a_session_without_job_permission_is_refused(catalog, client, django_user_model) -> None:
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("datasets_only", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_dataset"))
    client.force_login(user)
    orders = dataset_id(DB, "shop.public.orders")
    assert client.get(f"/admin/catalog/dataset/{orders}/impact/").status_code == 403

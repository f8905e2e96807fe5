"""Issue 40 item 2: the admin's Changes page and a dataset page's own changes, each with
what it breaks downstream (ADR 0082)."""

import pytest

from catalog.models import Dataset, DatasetChange
from tests.api.project_fixtures import derive
from tests.api.test_changes import BUILD, NS, VERSIONS, reads

pytestmark = pytest.mark.django_db


@pytest.fixture
def changed() -> None:
    derive(*VERSIONS, reads(BUILD, 50, 10, total="amount"))


def test_the_changes_page_lists_changes_and_a_change_names_what_it_breaks(
    changed, steward_client
) -> None:
    page = steward_client.get("/admin/catalog/datasetchange/")
    assert page.status_code == 200
    assert "currency" in page.content.decode() and "region" in page.content.decode()
    retyped = DatasetChange.objects.get(kind="type_changed")
    detail = steward_client.get(f"/admin/catalog/datasetchange/{retyped.pk}/change/")
    assert detail.status_code == 200
    body = detail.content.decode()
    assert "total" in body and "build_out" in body and "current" in body
    filtered = steward_client.get("/admin/catalog/datasetchange/", {"kind": "column_added"})
    assert "region" in filtered.content.decode() and ">amount<" not in filtered.content.decode()


def test_the_dataset_page_shows_its_own_changes(changed, steward_client) -> None:
    orders = Dataset.objects.for_alias(NS, "orders").get().id
    body = steward_client.get(f"/admin/catalog/dataset/{orders}/change/").content.decode()
    assert "Changes, newest first: schema" in body
    assert "breaks build_out.total (current)" in body
    other = Dataset.objects.for_alias(NS, "build_out").get().id
    body = steward_client.get(f"/admin/catalog/dataset/{other}/change/").content.decode()
    assert "breaks build_out" not in body

"""The dataset detail's row, compiled once per process and prepared (core.prepared.RowByKey,
ADR 0124): the same values as the ORM gives, the queryset's rule of who sees what is retired,
one prepared statement whatever the key's size."""

import pytest
from django.db import connection
from django.test import Client

from api.views.catalog import DETAIL_ROW, DETAIL_ROWS, DatasetViewSet
from catalog.models import Dataset
from catalog.services import retirement
from catalog.services.retirement import Actor
from core.prepared import RowByKey
from tests.admin.conftest import groups, steward, steward_client
from tests.api.factories import make_dataset

__all__ = ["groups", "steward", "steward_client"]  # fixtures

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def retired() -> Dataset:
    dataset = make_dataset(
        "shop.public.gone",
        facets={"schema": {"fields": [{"name": "id"}]}, "big": 2**70},
        tags=[{"key": "tier", "value": "gold", "hidden": False}],
    )
    retirement.retire(dataset, Actor("stew"), "dropped")
    return dataset


def test_the_row_is_the_orms_for_each_reader(fresh_connection, retired: Dataset) -> None:
    shown = make_dataset("shop.public.kept", owners=[{"name": "team", "hidden": False}])
    everything = DatasetViewSet.detail_queryset.values(*DETAIL_ROW)
    for dataset in (shown, retired):
        expected = everything.get(pk=dataset.pk)
        assert DETAIL_ROWS[True].get(dataset.pk) == expected  # JSON parsed, retirement read
    assert DETAIL_ROWS[True].get(retired.pk)["retired_reason"] == "dropped"
    # Who does not see what is retired gets the ORM's current() row, or none.
    assert DETAIL_ROWS[False].get(shown.pk) == everything.get(pk=shown.pk)
    assert DETAIL_ROWS[False].get(retired.pk) is None
    assert DETAIL_ROWS[False].get(2**40) is None  # a key wider than any stored one


def test_one_statement_is_prepared_whatever_the_keys_size(fresh_connection) -> None:
    dataset = make_dataset()
    rows = RowByKey(Dataset.objects.all(), ("id", "name"))
    for key in (dataset.pk, 2**20, 2**40, dataset.pk):  # int2, int4 and int8 in Python's eyes
        rows.get(key)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), sum(generic_plans + custom_plans) FROM pg_prepared_statements"
            ' WHERE statement LIKE \'%%"catalog_dataset"."name"%%\''
        )
        assert cursor.fetchone() == (1, 4)
    assert rows.get(dataset.pk) == {"id": dataset.pk, "name": dataset.name}


def test_a_queryset_that_holds_the_key_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="not one parameter"):
        RowByKey(Dataset.objects.filter(pk=-0x4B4559), ("id",)).get(1)


def test_the_view_takes_the_row_get_queryset_would(
    fresh_connection, retired: Dataset, read_client: Client, steward_client
) -> None:
    """A read token gets the current() row (404 for a retired dataset), a steward the
    retired one with its retirement: DETAIL_ROWS is chosen by the same ``sees_retired``
    as ReadOnlyViewSet.get_queryset."""
    assert read_client.get(f"/api/v1/datasets/{retired.pk}").status_code == 404
    body = steward_client.get(f"/api/v1/datasets/{retired.pk}").json()
    assert body["retired"]["reason"] == "dropped"
    assert body["facets"]["big"] == 2**70

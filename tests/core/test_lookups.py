"""``field__any=values``: the rows ``field__in=values`` finds, sent as one array parameter."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Dataset, DatasetAlias, Job
from tests.api.factories import add_alias, make_dataset, make_job


@pytest.mark.django_db
def test_the_rows_of_in_with_one_parameter() -> None:
    jobs = [make_job(f"job.{index}") for index in range(300)]
    wanted = [job.id for job in jobs[::3]] + [2**62]  # and an id nobody has
    with CaptureQueriesContext(connection) as queries:
        found = list(Job.objects.filter(id__any=wanted).order_by("id").values_list("id", flat=True))
    assert found == sorted(job.id for job in jobs[::3])
    assert found == list(
        Job.objects.filter(id__in=wanted).order_by("id").values_list("id", flat=True)
    )
    assert "= ANY(" in queries[0]["sql"] and queries[0]["sql"].count("'{") == 1


@pytest.mark.django_db
def test_sets_empty_lists_foreign_keys_and_text() -> None:
    first, second = make_dataset("shop.orders"), make_dataset("shop.customers")
    add_alias(second, "s3://bucket", "customers")
    assert not Job.objects.filter(id__any=[]).exists()
    assert set(Dataset.objects.filter(id__any={first.id, second.id})) == {first, second}
    by_dataset = DatasetAlias.objects.filter(dataset_id__any=[second.id])
    assert {alias.name for alias in by_dataset} == {"shop.customers", "customers"}
    assert set(DatasetAlias.objects.filter(dataset__any=[second.id])) == set(by_dataset)
    assert list(Dataset.objects.filter(name__any=["shop.orders"])) == [first]


@pytest.mark.django_db
def test_excluded_like_any_other_lookup() -> None:
    jobs = [make_job(f"job.{index}") for index in range(4)]
    left = Job.objects.exclude(id__any=[jobs[0].id, jobs[1].id]).order_by("id")
    assert list(left) == jobs[2:]

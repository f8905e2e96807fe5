"""Splitting an alias off a dataset: at once, through the admin, and kept by rederive."""

import uuid

import pytest
from django.contrib.auth import get_user_model

from catalog.models import AliasRule, Dataset, DatasetAlias, LineageEdge
from catalog.services import curation
from catalog.services.derive import derive_events, rederive
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import canonical_dump, openlineage, store

pytestmark = pytest.mark.django_db

TABLE = {"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}


def _derive(*events: dict) -> None:
    for event in events:
        derive_events(store([openlineage(event)]))


def _spark_write(minute: int) -> dict:
    """A Spark run writing a location whose symlinks facet names the Hive table."""
    return run_event(
        "COMPLETE",
        minute,
        str(uuid.uuid4()),
        job=("spark", "load"),
        inputs=[dataset("s3://raw", "orders")],
        outputs=[dataset("hdfs://nn", "/warehouse/orders", symlinks=facet(identifiers=[TABLE]))],
    )


def _location() -> DatasetAlias:
    return DatasetAlias.objects.get(namespace="hdfs://nn")


def test_split_moves_the_alias_and_its_edges_and_rederive_keeps_it(
    django_capture_on_commit_callbacks,
) -> None:
    _derive(_spark_write(1))
    assert Dataset.objects.count() == 2  # s3 input; location + table as one
    steward = get_user_model().objects.create_user("steward", is_staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        rule = curation.split_alias(steward, _location())

    assert rule.action == "detach" and rule.created_by == steward
    location, table = _location(), DatasetAlias.objects.get(namespace="hive://metastore:9083")
    assert location.dataset_id != table.dataset_id
    assert (location.dataset.namespace, location.dataset.name) == ("hdfs://nn", "/warehouse/orders")
    assert (table.dataset.namespace, table.dataset.name) == (
        "hive://metastore:9083",
        "sales.orders",
    )
    # The run wrote the location: its edge now ends at the location's own dataset.
    assert list(LineageEdge.objects.values_list("target_id", flat=True)) == [location.dataset_id]

    _derive(_spark_write(2))  # the symlink is seen again: still apart
    assert (
        _location().dataset_id != DatasetAlias.objects.get(namespace=TABLE["namespace"]).dataset_id
    )
    incremental = canonical_dump()
    rederive()
    rebuilt = canonical_dump()
    for key in incremental:
        assert rebuilt[key] == incremental[key], key
    assert AliasRule.objects.filter(slug=rule.slug).exists()


def test_split_of_a_lone_alias_is_refused() -> None:
    _derive(run_event("COMPLETE", 1, str(uuid.uuid4()), outputs=[dataset("s3://lake", "alone")]))
    steward = get_user_model().objects.create_user("steward", is_staff=True)
    alone = DatasetAlias.objects.get(name="alone")
    with pytest.raises(ValueError, match="only name"):
        curation.split_alias(steward, alone)


def test_admin_split_action_needs_the_merge_permission_and_is_logged(
    admin_client, django_capture_on_commit_callbacks
) -> None:
    from django.contrib.admin.models import LogEntry

    _derive(_spark_write(1))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/catalog/datasetalias/",
            {"action": "split_action", "_selected_action": [_location().pk]},
            follow=True,
        )
    assert response.status_code == 200
    assert "Split" in response.content.decode()
    assert (
        _location().dataset_id
        != DatasetAlias.objects.get(namespace="hive://metastore:9083").dataset_id
    )
    assert LogEntry.objects.filter(change_message__contains="split alias").exists()


def test_splitting_or_unpinning_more_than_20_does_none_and_says_so(admin_client) -> None:
    """docs/admin.md: *Split the selected aliases off* and *Let the display name follow the
    rule again*. Both did the first 20 selected and said nothing of the rest (the unpin said
    "Display names follow the rule again." for all): over 20 they now do nothing, said."""
    from catalog.models import AliasReason
    from catalog.names import naming

    datasets = Dataset.objects.bulk_create(
        Dataset(namespace="pg://db", name=f"t{n}") for n in range(21)
    )
    DatasetAlias.objects.bulk_create(
        DatasetAlias(
            namespace="pg://db",
            name=f"{name}_{n}",
            key_hash=naming.key_hash("pg://db", f"{name}_{n}"),
            dataset=dataset,
            reason=AliasReason.EVENT,
        )
        for dataset in datasets
        for n, name in enumerate((dataset.name, dataset.name))
    )
    aliases = list(DatasetAlias.objects.values_list("pk", flat=True).order_by("pk")[::2])
    page = admin_client.post(
        "/admin/catalog/datasetalias/",
        {"action": "split_action", "_selected_action": aliases},
        follow=True,
    ).content.decode()
    assert "Select at most 20 at once: nothing was done" in page
    assert not AliasRule.objects.exists() and Dataset.objects.count() == 21
    page = admin_client.post(
        "/admin/catalog/dataset/",
        {"action": "unpin_action", "_selected_action": [d.pk for d in datasets]},
        follow=True,
    ).content.decode()
    assert "Select at most 20 at once: nothing was done" in page
    assert "Display names follow the rule again." not in page

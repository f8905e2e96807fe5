"""docs/notifications.md: "The changes the catalog held when notifications were installed
(migration 0028_notifications) are not sent." The migration marks them seen with SQL of its
own, which must make the very keys the outbox makes (catalog/notify/outbox.py's
change_key), or a rederive after it would announce every old change. Its SQL is run here on
a catalog that holds changes of every kind of key (an alias's schema changes and the kinds
without an alias) and no ledger, as one installed over an older catalog does; a rederive
after it, and more events, send only what is new."""

import importlib

import pytest
from django.db import connection
from django.db.migrations import RunSQL

from catalog.models import DatasetChange, NotifiedChange, WebhookDelivery, WebhookSubscription
from catalog.services.derive import rederive
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, V3, load
from tests.catalog.conftest import dataset, run_event

pytestmark = pytest.mark.django_db


def migration_sql() -> str:
    module = importlib.import_module("catalog.migrations.0028_notifications")
    (operation,) = [op for op in module.Migration.operations if isinstance(op, RunSQL)]
    return str(operation.sql)


def test_the_changes_held_at_installation_are_never_sent() -> None:
    derive(
        load(V1, 0, 0),
        load(V2, 100, 1),
        run_event("COMPLETE", 110, "00000000-0000-0000-0000-0000000000a1", ("etl", "copy"),
                  [dataset("s3://lake", "a")], [dataset("s3://lake", "out")]),
        run_event("COMPLETE", 120, "00000000-0000-0000-0000-0000000000a2", ("etl", "copy"),
                  [dataset("s3://lake", "a"), dataset("s3://lake", "b")],
                  [dataset("s3://lake", "out")]),
        run_event("FAIL", 130, "00000000-0000-0000-0000-0000000000a3", ("etl", "copy")),
    )  # fmt: skip
    kinds = set(DatasetChange.objects.values_list("kind", flat=True))
    assert {"column_removed", "edge_added", "run_failed"} <= kinds, kinds
    NotifiedChange.objects.all().delete()  # the catalog as it was before notifications
    with connection.cursor() as cursor:
        cursor.execute(migration_sql())
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/all")
    rederive()
    assert not WebhookDelivery.objects.exists()
    derive(load(V3, 200, 2))  # a new change: sent
    assert list(WebhookDelivery.objects.values_list("kind", flat=True)) == ["column_added"]

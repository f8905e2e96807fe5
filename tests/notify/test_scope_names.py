"""docs/notifications.md, "Subscribing": a subscription's namespaces cover "changes of
datasets seen under these namespaces", its datasets and downstream roots are datasets by
"any of their names". A steward copies those from what producers send, and the catalog
stores them normalised (docs/derivation.md, "Names": ``postgresql://db`` is stored as
``postgres://db:5432``, ``s3a://lake/`` as ``s3://lake``). A subscription written with the
names as sent must get the changes of those datasets, as a lookup by that name finds them
(every lookup by a name goes through ``stored_key``, catalog/models/identity.py)."""

import pytest

from catalog.models import WebhookDelivery, WebhookSubscription
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event

pytestmark = pytest.mark.django_db

SENT = "postgresql://DB/"  # as a producer may send it; stored as postgres://db:5432


def load(fields: list[str], seconds: int, run: str) -> dict:
    schema = facet(fields=[{"name": name, "type": "text"} for name in fields])
    out = dataset(SENT, "public.orders", schema=schema)
    return run_event("COMPLETE", seconds, run, ("etl", "load"), outputs=[out])


def reads(seconds: int, run: str) -> dict:
    return run_event(
        "COMPLETE",
        seconds,
        run,
        ("etl", "build"),
        inputs=[dataset(SENT, "public.orders")],
        outputs=[dataset(SENT, "public.summary")],
    )


def test_a_subscription_written_with_the_names_as_sent_gets_their_changes() -> None:
    scoped = {
        "namespace": {"namespaces": [SENT]},
        "dataset": {"datasets": [[SENT, "public.orders"]]},
        "downstream": {"downstream_of": [[SENT, "public.orders"]]},
        "elsewhere": {"namespaces": ["postgresql://other/"]},
    }
    for name, scope in scoped.items():
        WebhookSubscription.objects.create(
            name=name, url=f"https://hooks.example.com/{name}", **scope
        )
    derive(
        load(["id", "note"], 0, "00000000-0000-0000-0000-000000000001"),
        reads(10, "00000000-0000-0000-0000-000000000002"),
    )
    derive(load(["id"], 100, "00000000-0000-0000-0000-000000000003"))  # note removed
    got = {
        name: sorted(
            WebhookDelivery.objects.filter(subscription__name=name).values_list("kind", flat=True)
        )
        for name in scoped
    }
    assert got == {
        "namespace": ["column_removed"],
        "dataset": ["column_removed"],
        "downstream": ["column_removed"],
        "elsewhere": [],
    }

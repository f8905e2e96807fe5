"""The change kinds without an alias (ADR 0088) reach webhooks saying what they are about:
the dataset retired, the edge's target and upstream, the failed run's job; and a
subscription scoped to a namespace gets only its own (ADR 0086). End to end: events
derived, a dataset retired through the service, the outbox's deliveries read back."""

import pytest

from catalog.models import Dataset, DatasetChange, Job, WebhookDelivery, WebhookSubscription
from catalog.services import retirement
from catalog.services.derive import derive_events
from catalog.services.retirement import Actor
from tests.catalog.conftest import dataset, run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

LAKE, WAREHOUSE = "s3://lake", "pg://warehouse"


def _runs() -> None:
    """etl.copy writes lake/out from lake/a, then from lake/b as well (a new upstream
    edge), then fails (after it had succeeded)."""
    runs = [
        run_event("COMPLETE", 0, "00000000-0000-0000-0000-0000000000a1", job=("etl", "copy"),
                  inputs=[dataset(LAKE, "a")], outputs=[dataset(LAKE, "out")]),
        run_event("COMPLETE", 10, "00000000-0000-0000-0000-0000000000a2", job=("etl", "copy"),
                  inputs=[dataset(LAKE, "a"), dataset(LAKE, "b")], outputs=[dataset(LAKE, "out")]),
        run_event("FAIL", 20, "00000000-0000-0000-0000-0000000000a3", job=("etl", "copy")),
    ]  # fmt: skip
    derive_events(store([openlineage(event) for event in runs]))


def _data(kind: str, subscription: str = "all") -> list[dict]:
    return [
        delivery.payload["data"]
        for delivery in WebhookDelivery.objects.filter(kind=kind, subscription__name=subscription)
    ]


def test_every_kind_names_what_it_is_about() -> None:
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/all")
    _runs()
    out, b = Dataset.objects.get(name="out"), Dataset.objects.get(name="b")
    job = Job.objects.get(name="copy")
    [added] = _data("edge_added")
    assert (added["dataset"], added["namespace"], added["name"]) == (
        f"dataset:{out.pk}",
        LAKE,
        "out",
    )
    assert added["upstream"] == f"dataset:{b.pk}" and added["job"] == f"job:{job.pk}"
    [failed] = _data("run_failed")
    assert (failed["dataset"], failed["namespace"], failed["name"]) == (None, "etl", "copy")
    assert failed["previous_run_id"] == "00000000-0000-0000-0000-0000000000a2"
    retirement.retire(out, Actor("stew"), "replaced")
    [retired] = _data("dataset_retired")
    assert (retired["dataset"], retired["name"]) == (f"dataset:{out.pk}", "out")
    assert "replaced" in retired["detail"]


def test_a_namespace_scope_covers_the_kinds_without_an_alias() -> None:
    WebhookSubscription.objects.create(
        name="lake", url="https://hooks.example.com/lake", namespaces=[LAKE]
    )
    WebhookSubscription.objects.create(
        name="warehouse", url="https://hooks.example.com/wh", namespaces=[WAREHOUSE]
    )
    _runs()
    assert len(_data("edge_added", "lake")) == 1
    assert _data("edge_added", "warehouse") == []


def test_a_change_withdrawn_by_a_late_event_keeps_its_delivery() -> None:
    """X writes out from a; M, known by its COMPLETE only (later, naming no dataset), wrote
    nothing: a -> out stopped, announced. M's START, earlier than X, puts M first: the
    change is withdrawn from the list, and its delivery (sent or not) stays; nothing
    announces the withdrawal (docs/notifications.md)."""
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/all")
    x, m = "00000000-0000-0000-0000-0000000000b1", "00000000-0000-0000-0000-0000000000b2"
    events = [
        run_event("COMPLETE", 10, x, job=("etl", "copy"), inputs=[dataset(LAKE, "a")],
                  outputs=[dataset(LAKE, "out")]),
        run_event("COMPLETE", 20, m, job=("etl", "copy")),
    ]  # fmt: skip
    derive_events(store([openlineage(event) for event in events]))
    [stopped] = _data("edge_stopped")
    assert (stopped["run_id"], stopped["previous_run_id"]) == (m, x)
    assert DatasetChange.objects.filter(kind="edge_stopped").count() == 1
    derive_events(store([openlineage(run_event("START", 0, m, job=("etl", "copy")))]))
    assert not DatasetChange.objects.filter(kind="edge_stopped").exists()
    assert _data("edge_stopped") == [stopped]

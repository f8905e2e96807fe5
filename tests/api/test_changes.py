"""Issue 40 item 2: schema changes recorded by derivation, the same whatever the order,
batching or a rederive, flagged breaking when downstream column lineage reads the column
(current or stale), listed at /api/v1/changes (ADR 0082). End to end: ingest, derive."""

import itertools
import uuid
from urllib.parse import quote

import pytest

from catalog.models import Dataset, DatasetChange, Job, SchemaVersion
from catalog.services.derive import derive_events, rederive
from tests.api.project_fixtures import derive
from tests.catalog.conftest import at, dataset, facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
LOAD, BUILD, SUMMARY = ("etl", "load_orders"), ("etl", "build"), ("etl", "summary")
RUNS = [str(uuid.UUID(int=n)) for n in range(500, 520)]
V1 = [("id", "bigint"), ("amount", "int"), ("note", "text")]
V2 = [("id", "bigint"), ("amount", "numeric"), ("currency", "text")]  # note gone, amount retyped
V3 = [("id", "bigint"), ("amount", "numeric"), ("currency", "text"), ("region", "text")]


def schema(fields: list[tuple[str, str]]) -> dict:
    return facet(fields=[{"name": name, "type": type_} for name, type_ in fields])


def load(version: list[tuple[str, str]], seconds: int, run: int) -> dict:
    """The loader writes ``orders`` with this schema (one COMPLETE event)."""
    out = dataset(NS, "orders", schema=schema(version))
    return run_event("COMPLETE", seconds, RUNS[run], LOAD, outputs=[out])


def reads(job: tuple[str, str], seconds: int, run: int, **fields: str) -> dict:
    """``job`` writes ``<job name>_out`` with columns computed from orders' columns."""
    lineage = facet(
        fields={
            target: {"inputFields": [{"namespace": NS, "name": "orders", "field": source}]}
            for target, source in fields.items()
        }
    )
    out = dataset(NS, f"{job[1]}_out", columnLineage=lineage)
    return run_event("COMPLETE", seconds, RUNS[run], job, [dataset(NS, "orders")], [out])


VERSIONS = [load(V1, 0, 0), load(V2, 100, 1), load(V3, 200, 2)]


def changes() -> set[tuple]:
    return {
        (c.kind, c.column, c.old_type, c.new_type, c.changed_at.isoformat(), c.run_id)
        for c in DatasetChange.objects.all()
    }


EXPECTED = {
    ("column_removed", "note", "text", "", "2026-01-01T12:01:40+00:00", RUNS[1]),
    ("type_changed", "amount", "int", "numeric", "2026-01-01T12:01:40+00:00", RUNS[1]),
    ("column_added", "currency", "", "text", "2026-01-01T12:01:40+00:00", RUNS[1]),
    ("column_added", "region", "", "text", "2026-01-01T12:03:20+00:00", RUNS[2]),
}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_changes_are_the_same_in_any_order(order) -> None:
    # (0, 2, 1): the late event lands between two versions and splits their change.
    derive(*(VERSIONS[index] for index in order))
    assert changes() == EXPECTED


def test_one_batch_a_repeat_and_a_rederive_give_the_same_changes() -> None:
    derive_events(store([openlineage(event) for event in reversed(VERSIONS)]))
    assert changes() == EXPECTED
    derive(load(V2, 300, 3))  # the same schema again, later: nothing new
    assert changes() == EXPECTED and SchemaVersion.objects.count() == 3
    rederive()
    assert changes() == EXPECTED


@pytest.fixture
def readers() -> None:
    """build reads orders.amount (current); summary read orders.note, then its later run
    no longer did (stale); region is read by nobody."""
    derive(
        *VERSIONS,
        reads(BUILD, 50, 10, total="amount"),
        reads(SUMMARY, 60, 11, notes="note"),
        reads(SUMMARY, 150, 12, count="id"),
    )


def listed(api, **params: str) -> list[dict]:
    response = api.get("/api/v1/changes", params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_removed_or_retyped_column_read_downstream_is_breaking(api, readers) -> None:
    items = {(item["kind"], item["column"]): item for item in listed(api)}
    build_out = Dataset.objects.for_alias(NS, "build_out").get().id
    summary_out = Dataset.objects.for_alias(NS, "summary_out").get().id
    retyped = items[("type_changed", "amount")]
    assert retyped["breaking"] and retyped["breaks"] == [
        {
            "dataset": f"dataset:{build_out}",
            "namespace": NS,
            "name": "build_out",
            "field": "total",
            "job": f"job:{Job.objects.get(name='build').id}",
            "current": True,
        }
    ]
    removed = items[("column_removed", "note")]
    assert removed["breaking"]
    assert [(b["dataset"], b["field"], b["current"]) for b in removed["breaks"]] == [
        (f"dataset:{summary_out}", "notes", False)  # stale: summary's latest run did not
    ]
    assert not items[("column_added", "region")]["breaking"]
    assert items[("column_added", "region")]["breaks"] == []
    orders = Dataset.objects.for_alias(NS, "orders").get().id
    assert {item["dataset"] for item in items.values()} == {f"dataset:{orders}"}


def test_the_list_filters_by_time_kind_namespace_and_dataset(api, readers) -> None:
    assert [item["column"] for item in listed(api, since=at(150))] == ["region"]
    assert {item["column"] for item in listed(api, kind="column_removed,type_changed")} == {
        "note",
        "amount",
    }
    assert listed(api, namespace="s3://elsewhere") == []
    assert len(listed(api, namespace=NS)) == 4
    orders = Dataset.objects.for_alias(NS, "orders").get().id
    assert len(listed(api, dataset=str(orders))) == 4
    newest_first = [item["changed_at"] for item in listed(api)]
    assert newest_first == sorted(newest_first, reverse=True)
    assert api.get("/api/v1/changes", {"kind": "dropped"}).status_code == 400
    assert api.get("/api/v1/changes", {"dataset": "x"}).status_code == 400
    assert api.get("/api/v1/changes", {"cursor": "nope"}).status_code == 400


def test_the_list_is_paginated_and_its_queries_pinned(api, readers, django_assert_num_queries):
    first = api.get("/api/v1/changes", {"limit": "2"}).json()
    assert len(first["results"]) == 2 and first["next"]
    rest = api.get(first["next"]).json()
    assert len(rest["results"]) == 2
    # The page (with its aliases), the readers' column edges, their currency.
    with django_assert_num_queries(3):
        listed(api)


def test_marquez_shows_each_version_with_its_own_schema(api, readers) -> None:
    """Marquez has no change records: its dataset versions are the writes, each with the
    fields its run sent, and the changes are read off them as Marquez users do."""
    response = MarquezClient(api).get(f"/namespaces/{quote(NS, safe='')}/datasets/orders/versions")
    assert response.status_code == 200, response.content
    versions = response.json()["versions"]
    fields = [[(f["name"], f["type"]) for f in version["fields"]] for version in versions]
    assert fields == [V3, V2, V1]  # newest first

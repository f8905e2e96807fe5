"""/api/v1/changes answers byte for byte what it answered when each item was built from
model instances: the list's items are built from rows now (ADR 0105), and this holds every
page, forwards and back, filtered and cut by the byte cap, to the instances' items on a
store that reaches every field: each kind, a schema change seen under a second name of its
dataset, readers current, stale and more than a change names, a null event, blank runs, a
steward's detail with a secret redacted, a column name with quotes, U+2028 and non-ASCII."""

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from catalog.lineage import breaking, column_lineage
from catalog.models import BREAKING_KINDS, Dataset, DatasetChange
from catalog.services.retirement import Actor, restore, retire
from core.redaction import REDACTED
from core.rendering import compact
from tests.api import test_change_kinds as kinds
from tests.api import test_changes as schema
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event

pytestmark = pytest.mark.django_db

NS = schema.NS
LOCATION = ("hdfs://nn", "/warehouse/orders")
# Quotes, a line separator and non-ASCII: the renderer escapes them in both answers alike.
ODD = 'note "é"\u2028x'


def _named(prefix: str, row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"id": f"{prefix}:{row.pk}", "namespace": row.namespace, "name": row.name}


def instance_item(change: DatasetChange, breaks: breaking.Breaks | None) -> dict[str, Any]:
    """An item as the view built it from a change's instance and its related instances
    until they were built from rows (``api.views.changes.change_dict`` then), kept here
    as the reference."""
    named: Any = change.alias or change.dataset or change.job
    dataset_id = change.alias.dataset_id if change.alias else change.dataset_id
    return {
        "id": change.pk,
        "kind": change.kind,
        "dataset": f"dataset:{dataset_id}" if dataset_id else None,
        "namespace": named.namespace,
        "name": named.name,
        "upstream": _named("dataset", change.source),
        "job": _named("job", change.job),
        "column": change.column,
        "old_type": change.old_type,
        "new_type": change.new_type,
        "changed_at": change.changed_at,
        "event_id": change.event_id,
        "run_id": change.run_id,
        "previous_run_id": change.previous_run_id,
        "detail": change.detail,
        "breaking": breaks is not None,
        "breaks": breaks.readers if breaks else [],
        "breaks_truncated": bool(breaks and breaks.left_out),
    }


def expected_body(body: dict[str, Any]) -> bytes:
    """The answer the instances give for the page ``body`` names: its links, and its items
    built from the changes' instances (``select_related``, as the list read them) with
    their breaks read from those instances."""
    ids = [item["id"] for item in body["results"]]
    rows = DatasetChange.objects.select_related("alias__dataset", "dataset", "source", "job")
    by_id = rows.in_bulk(ids)
    page = [by_id[pk] for pk in ids]
    found = breaking.breaks(page)
    items = [instance_item(change, found.get(change.pk)) for change in page]
    return compact({"next": body["next"], "previous": body["previous"], "results": items})


def walk(api: Client, query: str, limit: int) -> int:
    """Every page of ``/changes?query`` forwards, then back from the last, each answer
    compared byte for byte; the number of items seen forwards."""
    url: str | None = f"/api/v1/changes?{query}&limit={limit}"
    seen, last = 0, None
    while url:
        response = api.get(url)
        assert response.status_code == 200, response.content
        last = response.json()
        assert response.content == expected_body(last), url
        seen += len(last["results"])
        url = last["next"]
    url = last["previous"] if last else None
    while url:
        response = api.get(url)
        assert response.content == expected_body(response.json()), url
        url = response.json()["previous"]
    return seen


@pytest.fixture(scope="module")
def _store_once(module_transaction: Callable[[], AbstractContextManager[None]]) -> None:
    # Written once for the module's tests, every one of which reads it (ADR 0210); each
    # test's writes are rolled back to it (ADR 0113).
    with module_transaction():
        _write_store()


@pytest.fixture
def store(_store_once: None, db: None) -> None:
    """The module's store (``_write_store``), written once."""


def _write_store() -> None:
    """Schema changes with readers (test_changes' store) and one more reader of 21 columns
    of orders.amount (more than a change names); a schema change under orders' second
    name (its location, a symlink to it) of a column with an odd name; test_change_kinds'
    edge and run changes; out retired with a secret in the reason, and restored."""
    location = facet(identifiers=[{"namespace": NS, "name": "orders", "type": "TABLE"}])
    fields = [{"name": name, "type": "text"} for name in ("id", ODD)]

    def by_location(seconds: int, sent: list[dict[str, str]]) -> dict:
        out = dataset(*LOCATION, symlinks=location, schema=facet(fields=sent))
        return run_event("COMPLETE", seconds, str(uuid.UUID(int=900 + seconds)), outputs=[out])

    wide = {f"c{n}": "amount" for n in range(21)}
    derive(
        *schema.VERSIONS,
        schema.reads(schema.BUILD, 50, 10, total="amount"),
        schema.reads(schema.SUMMARY, 60, 11, notes="note"),
        schema.reads(schema.SUMMARY, 150, 12, count="id"),
        schema.reads(("etl", "wide"), 70, 13, **wide),
        by_location(230, fields),
        by_location(240, fields[:1]),
        *kinds.EVENTS,
    )
    out = Dataset.objects.for_alias(NS, "out").get()
    retire(out, Actor("steward"), reason="moved; password=hunter2")
    restore(out, Actor("steward"))


def test_every_page_is_the_instances_answer_byte_for_byte(api, store) -> None:
    everything = DatasetChange.objects.count()
    body = api.get("/api/v1/changes?limit=500").content.decode()
    # The store reaches every field and every kind of value.
    assert {kind for kind in DatasetChange.objects.values_list("kind", flat=True)} == {
        "column_added",
        "column_removed",
        "type_changed",
        "edge_added",
        "edge_stopped",
        "run_failed",
        "dataset_retired",
        "dataset_restored",
    }
    for shown in (
        '"breaks_truncated":true',
        '"current":false',
        '"current":true',
        '"event_id":null',
        '"dataset":null',
        '"upstream":null',
        '"job":null',
        '"run_id":""',
        '"name":"/warehouse/orders"',
        "\\u2028",
        f"password={REDACTED}",
    ):
        assert shown in body, shown
    assert "hunter2" not in body
    assert walk(api, "", 500) == everything
    assert walk(api, "", 3) == everything
    assert walk(api, "kind=type_changed,column_removed,run_failed", 2) > 0
    orders = Dataset.objects.for_alias(NS, "orders").get()
    assert walk(api, f"dataset={orders.pk}", 4) > 0
    assert walk(api, f"namespace={NS}", 5) > 0


def test_pages_cut_by_the_byte_cap_are_the_instances_answer(api, store, settings) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "MAX_PAGE_BYTES": 1_500}
    first = api.get("/api/v1/changes?limit=500").json()
    assert 1 <= len(first["results"]) < DatasetChange.objects.count() and first["next"]
    assert walk(api, "", 500) == DatasetChange.objects.count()


def _field_reads() -> int:
    """Scans of catalog_dataset_field in this transaction so far (PostgreSQL's count)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables"
            " WHERE relname = 'catalog_dataset_field'"
        )
        return cursor.fetchone()[0]


def test_readers_are_steps_edges_in_its_order_at_every_limit(store) -> None:
    """A change's readers are read narrowed (``column_lineage.readers``: the columns a
    reader names, for half the backend CPU): the rows ``column_lineage.step`` reads
    downstream, in its order, so a limit cuts the same ones, at every limit."""
    frontier = {
        (change.alias.dataset_id, change.column)
        for change in DatasetChange.objects.select_related("alias").filter(kind__in=BREAKING_KINDS)
    }
    # What a reader does not name is not read: step's outside-schema test read the dataset
    # fields (two hashes of them all on bench/changes.py's store).
    changes = DatasetChange.objects.select_related("alias").order_by("id")
    before = _field_reads()
    assert breaking.breaks(list(changes))
    assert _field_reads() == before
    everything = column_lineage.step(frontier, upstream=False, limit=1_000)
    assert len(everything) > 21  # more than a change names
    for limit in range(1, len(everything) + 2):
        assert column_lineage.readers(frontier, limit) == [
            column_lineage.Reader(
                edge.id,
                edge.source_id,
                edge.source_field,
                edge.target_id,
                edge.target_namespace,
                edge.target_name,
                edge.target_field,
                edge.job_id,
            )
            for edge in column_lineage.step(frontier, upstream=False, limit=limit)
        ], limit

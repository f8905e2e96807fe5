"""A filter on a column no index holds in the list's order searches the newest rows only,
says so, and links the rows before them (ADR 0208): the events' kind, type and derived
status, the changes' kind, the aliases' and alias links' reason, the column edges'
dataset level, the jobs' placeholders, the datasets' dropped flag and the labels' target,
kind and hides. Before, a rare value's page walked the list's index until 50 matched and
its count read to 10,001 matches: the whole table when fewer matched.

Each table here holds ``OLD`` rows of the rare value, ``COMMON`` others after them and
``NEW`` rare ones last, the window set to ``BOUND`` rows (the admin's 10,000 would need a
store's tables); with sequential and bitmap scans priced out, PostgreSQL reads them as it
would a store's, so a walk to the table's end shows as its rows.
"""

import hashlib
import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import (
    AliasLink,
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    DatasetChange,
    Job,
    StewardLabel,
)
from catalog.names import naming
from core.admin_scans import WINDOW_VAR
from ingest.models import Event
from tests.api.factories import T0, add_alias, make_dataset, make_event, make_job

pytestmark = pytest.mark.django_db

BOUND, OLD, COMMON, NEW = 20, 3, 60, 2
_names = itertools.count(1)


def _exact_rows_read(sql: str, params: Any, table: str) -> int:
    """The rows ``sql``'s scans of ``table`` itself read (kept or filtered out, times their
    loops), by ``EXPLAIN ANALYZE`` with sequential and bitmap scans priced out."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]

    def walk(node: dict[str, Any]) -> int:
        own = 0
        if node.get("Relation Name") == table:
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            own = int(rows * node.get("Actual Loops", 1))
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan)


def _visit(client: Client, url: str, table: str) -> tuple[ChangeList, str, int]:
    """The page's change list, its HTML, and the rows of ``table`` every statement the page
    sent read (the window's floor, the page, the paginator's capped count)."""
    with CaptureQueriesContext(connection) as captured:
        answer = client.get(url)
    assert answer.status_code == 200, (url, answer.status_code, answer.content[:300])
    # The statements again with their parameters, as the cursor sent them.
    read = 0
    for query in captured.captured_queries:
        sql = query["sql"]
        if sql.startswith(("SELECT", "WITH")) and f'"{table}"' in sql:
            read += _exact_rows_read(sql, None, table)
    return answer.context["cl"], answer.content.decode(), read


def _windowed(monkeypatch: pytest.MonkeyPatch, model: type) -> None:
    monkeypatch.setattr(type(admin.site._registry[model]), "filtered_rows", BOUND, raising=False)


def _ids(changelist: ChangeList) -> list[int]:
    return [row.pk for row in changelist.result_list]


def _walk_older(client: Client, url: str, table: str) -> list[int]:
    """Every row the filter finds, following the page's "before" link to the table's start."""
    found: list[int] = []
    for _ in range(20):
        changelist, html, _read = _visit(client, url, table)
        found += _ids(changelist)
        older = re.search(r'href="(\?[^"]*' + WINDOW_VAR + r'=\d+[^"]*)">Search the', html)
        if older is None:
            return found
        url = url.split("?")[0] + older.group(1).replace("&amp;", "&")
    raise AssertionError("no end to the older rows")


def _check(
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
    model: type,
    url: str,
    make: Callable[[bool], int],
) -> None:
    """``OLD`` rare rows, ``COMMON`` others, ``NEW`` rare: the filtered page lists the new
    rare rows, newest first, reads at most its window three times (the floor, the page, the
    count), says which rows it searched, and its "before" links reach the old ones."""
    _windowed(monkeypatch, model)
    old = [make(True) for _ in range(OLD)]
    for _ in range(COMMON):
        make(False)
    new = [make(True) for _ in range(NEW)]
    table = model._meta.db_table
    changelist, html, read = _visit(client, url, table)
    assert _ids(changelist) == new[::-1], (url, _ids(changelist))
    assert changelist.result_count == NEW
    assert f"only the newest {BOUND} " in html, url
    assert "Search the 20 before #" in html
    # The floor's BOUND entries, the page's and the count's at most BOUND rows each; the
    # walk to the table's end read OLD + COMMON + NEW twice (130).
    assert read <= 3 * BOUND + 2, (url, read)
    assert sorted(_walk_older(client, url, table)) == sorted(old + new)


def _event(rare: bool, **rare_fields: Any) -> Callable[[bool], int]:
    def make(is_rare: bool) -> int:
        fields = rare_fields if is_rare else {"kind": "run", "event_type": "COMPLETE"}
        if "derivation_status" in rare_fields and not is_rare:
            fields = {"derivation_status": "pending"}
        return make_event(**fields).pk

    return make


@pytest.mark.parametrize(
    ("query", "rare"),
    [
        ("kind__exact=dataset", {"kind": "dataset", "event_type": None}),
        ("event_type=FAIL", {"event_type": "FAIL"}),
        ("derivation_status__exact=derived", {"derivation_status": "derived"}),
    ],
)
def test_an_events_filter_without_an_index_searches_the_newest_events(
    super_client: Client, monkeypatch: pytest.MonkeyPatch, query: str, rare: dict[str, Any]
) -> None:
    _check(super_client, monkeypatch, Event, f"/admin/ingest/event/?{query}", _event(True, **rare))


def test_pending_events_are_read_from_their_index_whole(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending and failed events have a partial index each: their list is every one, with
    no window and no notice."""
    _windowed(monkeypatch, Event)
    pending = [make_event(derivation_status="pending").pk for _ in range(BOUND + 5)]
    changelist, html, _read = _visit(
        super_client, "/admin/ingest/event/?derivation_status__exact=pending", "ingest_event"
    )
    assert _ids(changelist) == pending[::-1]
    assert "only the newest" not in html


def test_a_runs_events_filtered_are_its_own_whole(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run page's "events of this run" (a runId searched) is a range of the run's
    index, bounded by the run as the API's ``?run_id=`` is (ADR 0194): filtered by type it
    lists the run's old failures, which the log's newest ``BOUND`` events would hide."""
    _windowed(monkeypatch, Event)
    run_id = "8d3c2b8e-4b3f-4c55-9a51-0d1c2f3e4a5b"
    failed = [make_event(run_id=run_id, event_type="FAIL").pk for _ in range(OLD)]
    make_event(run_id=run_id, event_type="START")
    for _ in range(COMMON):
        make_event(event_type="COMPLETE")
    url = f"/admin/ingest/event/?q={run_id}&event_type=FAIL"
    changelist, html, _read = _visit(super_client, url, "ingest_event")
    assert sorted(_ids(changelist)) == failed
    assert "only the newest" not in html


def _change(kind_if_rare: str) -> Callable[[bool], int]:
    alias = make_dataset().aliases.first()  # type: ignore[attr-defined]

    def make(is_rare: bool) -> int:
        key = hashlib.sha256(str(next(_names)).encode()).digest()
        return DatasetChange.objects.create(
            alias=alias,
            kind=kind_if_rare if is_rare else "column_added",
            column="c",
            changed_at=T0,
            before_hash=key,
            after_hash=key,
            key_hash=key,
        ).pk

    return make


def test_a_rare_change_kind_searches_the_newest_changes(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "/admin/catalog/datasetchange/?kind__exact=type_changed"
    _check(super_client, monkeypatch, DatasetChange, url, _change("type_changed"))


def test_a_rare_alias_reason_searches_the_newest_aliases(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = make_dataset()

    def make(is_rare: bool) -> int:
        reason = "rename" if is_rare else "symlink"
        return add_alias(dataset, "hive://meta", f"t{next(_names)}", reason=reason).pk

    url = "/admin/catalog/datasetalias/?reason__exact=rename"
    _check(super_client, monkeypatch, DatasetAlias, url, make)


def test_a_rare_alias_link_reason_searches_the_newest_links(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = make_dataset()
    first = add_alias(dataset, "hive://meta", "first")

    def make(is_rare: bool) -> int:
        other = add_alias(dataset, "hive://meta", f"t{next(_names)}")
        reason = "rule" if is_rare else "symlink"
        return AliasLink.objects.create(alias_a=first, alias_b=other, reason=reason).pk

    url = "/admin/catalog/aliaslink/?reason__exact=rule"
    _check(super_client, monkeypatch, AliasLink, url, make)


def test_dataset_level_column_edges_search_the_newest_edges(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target, job = make_dataset(), make_dataset(), make_job()

    def make(is_rare: bool) -> int:
        field = f"c{next(_names)}"
        return ColumnLineageEdge.objects.create(
            source=source,
            source_field=field,
            target=target,
            target_field=field,
            job=job,
            dataset_level=is_rare,
            key_hash=hashlib.sha256(field.encode()).digest(),
            first_seen=T0,
            last_seen=T0,
            run_count=1,
        ).pk

    url = "/admin/catalog/columnlineageedge/?dataset_level__exact=1"
    _check(super_client, monkeypatch, ColumnLineageEdge, url, make)


def test_placeholder_jobs_search_the_newest_jobs(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def make(is_rare: bool) -> int:
        return make_job(is_placeholder=is_rare).pk

    _check(super_client, monkeypatch, Job, "/admin/catalog/job/?is_placeholder__exact=1", make)


def test_dropped_datasets_search_the_newest_datasets(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def make(is_rare: bool) -> int:
        return make_dataset(is_dropped=is_rare).pk

    _check(super_client, monkeypatch, Dataset, "/admin/catalog/dataset/?is_dropped__exact=1", make)


@pytest.mark.parametrize(
    ("query", "rare", "common"),
    [
        ("target__exact=job", {"target": "job"}, {"target": "dataset"}),
        ("kind__exact=owner", {"kind": "owner"}, {"kind": "tag"}),
        ("hides__exact=1", {"hides": True}, {"hides": False}),
    ],
)
def test_a_rare_label_filter_searches_the_newest_labels(
    super_client: Client,
    monkeypatch: pytest.MonkeyPatch,
    query: str,
    rare: dict[str, Any],
    common: dict[str, Any],
) -> None:
    def make(is_rare: bool) -> int:
        fields = {"target": "dataset", "kind": "tag", "hides": False}
        fields |= rare if is_rare else common
        name = f"t{next(_names)}"
        return StewardLabel.objects.create(
            namespace="db",
            name=name,
            key_hash=naming.key_hash("db", name),
            key="k",
            **fields,
        ).pk

    url = f"/admin/catalog/stewardlabel/?{query}"
    _check(super_client, monkeypatch, StewardLabel, url, make)


@pytest.mark.parametrize(
    "value",
    [
        "x",
        # Digits Python will not read as an int (more than 4,300 of them): a ValueError out
        # of the check, a 500 on every windowed list (ADR 0209).
        "9" * 5000,
        "9" * 20,
        str(2**63),
        "0",
        "-1",
        "\u0661",
    ],
)
def test_a_window_that_names_no_id_is_refused_not_a_500(super_client: Client, value: str) -> None:
    answer = super_client.get("/admin/ingest/event/", {"kind__exact": "dataset", WINDOW_VAR: value})
    assert answer.status_code < 500
    assert answer.status_code != 200 or b"only the newest" not in answer.content

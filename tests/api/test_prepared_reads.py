"""The dataset detail's fixed-text reads are prepared statements on kept connections only,
and answer as before (core.prepared.read_cursor, ADR 0119; all of them since ADR 0124)."""

from collections.abc import Iterator

import psycopg
import pytest
from django.db import NotSupportedError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import DatasetAlias
from catalog.reads import run_facts
from core import prepared
from tests.api.factories import add_fields, make_dataset, make_job, make_job_edge
from tests.faults.processes import current_database_url
from tests.prepared_statements import prepared_by_name

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(fresh_connection: None, read_client: Client) -> Client:
    return read_client


@pytest.fixture
def dataset_id() -> int:
    dataset = make_dataset("shop.public.orders")
    add_fields(dataset, "id", "total")
    job = make_job("load_orders")
    make_job_edge(job, dataset, "output")
    return dataset.id


# Each of the detail's statements, by a text only it holds.
STATEMENTS = {
    "row": '"catalog_retirement"',
    "detail_rows": "catalog_alias_rule",  # with the job links and the run facts
    # observed and declared, with the count outside the schema (ADR 0135)
    "column_lineage": "catalog_static_column_lineage",
}


# The admin's read of a dataset's latest run facts (the detail reads them with its own rows).
OF_DATASET = {"run_facts": "FROM unnest("}


def _prepared(statements: dict[str, str] = STATEMENTS) -> dict[str, int]:
    """Each prepared statement of this connection's reads (by ``statements``) and how often
    it ran."""
    return prepared_by_name(statements)


def _detail(client: Client, dataset_id: int) -> bytes:
    response = client.get(f"/api/v1/datasets/{dataset_id}")
    assert response.status_code == 200, response.content
    return response.content


def test_the_detail_prepares_its_fixed_reads_once_and_answers_the_same(
    client: Client, dataset_id: int, settings
) -> None:
    first = _detail(client, dataset_id)
    for _ in range(6):  # past PostgreSQL's five custom plans: a generic plan serves it
        assert _detail(client, dataset_id) == first
    # Every statement of the detail is prepared, once (ADR 0124).
    assert _prepared() == dict.fromkeys(STATEMENTS, 7)
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    connection.close()
    assert _detail(client, dataset_id) == first
    assert _prepared() == {}


def test_a_connection_closed_after_each_request_prepares_nothing(
    client: Client, dataset_id: int
) -> None:
    connection.ensure_connection()
    kept = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = 0
    try:
        _detail(client, dataset_id)
        connection.ensure_connection()
        assert _prepared() == {}
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = kept


def test_the_setting_turns_it_off(client: Client, dataset_id: int, settings) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    _detail(client, dataset_id)
    assert _prepared() == {}


def test_the_query_log_keeps_a_prepared_statements_text(client: Client, dataset_id: int) -> None:
    """psycopg sets no query text on a prepared execution; Django's log (DEBUG, the pinned
    counts' CaptureQueriesContext) still shows each statement's."""
    _detail(client, dataset_id)
    with CaptureQueriesContext(connection) as queries:
        _detail(client, dataset_id)
    assert all(isinstance(query["sql"], str) for query in queries.captured_queries)
    assert any("catalog_dataset_field f" in query["sql"] for query in queries.captured_queries)


@pytest.fixture
def facet_name_length() -> Iterator[None]:
    """A migration's ``ALTER COLUMN`` of a column the run-facts read returns, from another
    connection as a deploy's migration runs; the column's own length restored after."""
    yield
    _alter_facet_name(32)


def _alter_facet_name(length: int) -> None:
    with psycopg.connect(current_database_url(), autocommit=True) as other:
        other.execute(
            f"ALTER TABLE catalog_run_dataset_facet ALTER COLUMN name TYPE varchar({length})"
        )


def test_a_column_changed_under_a_prepared_read_is_prepared_anew(
    client: Client, dataset_id: int, facet_name_length: None
) -> None:
    """PostgreSQL refuses to run a statement prepared before its result's columns changed
    ("cached plan must not change result type"): outside a transaction the read prepares
    it anew and answers; inside one it fails, and the rollback lets the next one answer."""
    first = _detail(client, dataset_id)
    aliases = list(DatasetAlias.objects.filter(dataset_id=dataset_id).values_list("id", flat=True))
    assert run_facts.of_dataset(aliases) == []  # prepared: it returns the facet's name
    _alter_facet_name(64)
    assert run_facts.of_dataset(aliases) == []
    assert _prepared(OF_DATASET)["run_facts"] == 1  # prepared again, not run as it was
    assert _detail(client, dataset_id) == first
    _alter_facet_name(32)
    stale = "cached plan must not change result type"
    with pytest.raises(NotSupportedError, match=stale), transaction.atomic():
        run_facts.of_dataset(aliases)
    assert run_facts.of_dataset(aliases) == []
    assert _detail(client, dataset_id) == first


def test_the_detail_and_the_run_page_read_on_the_kept_cursor(
    client: Client, dataset_id: int, settings
) -> None:
    """Their fixed reads run on the one psycopg cursor kept with the connection (ADR 0135,
    ``core.prepared.read_rows``), not on a cursor made per statement."""
    made: list[object] = []
    original = prepared.PreparingCursor.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(self)
        original(self, *args, **kwargs)

    first = _detail(client, dataset_id)
    assert client.get("/api/v1/runs?limit=2").status_code == 200
    kept = getattr(connection, prepared._KEPT)
    assert kept[0] is connection.connection
    prepared.PreparingCursor.__init__ = counting  # type: ignore[method-assign]
    try:
        for _ in range(3):
            assert _detail(client, dataset_id) == first
            assert client.get("/api/v1/runs?limit=2").status_code == 200
    finally:
        prepared.PreparingCursor.__init__ = original  # type: ignore[method-assign]
    assert made == []  # no cursor made: every statement on the kept one
    assert getattr(connection, prepared._KEPT) is kept
    # Off, the reads are Django's own, parameters in the text, and prepare nothing.
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    connection.close()
    assert _detail(client, dataset_id) == first
    assert getattr(connection, prepared._KEPT, None) in (None, kept)
    assert _prepared() == {}

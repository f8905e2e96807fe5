"""The dataset detail's fixed-text reads are prepared statements on kept connections only,
and answer as before (core.prepared.read_cursor, ADR 0119; all of them since ADR 0124)."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.api.factories import add_fields, make_dataset, make_job, make_job_edge

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
    "column_lineage": "FROM catalog_column_lineage_edge c\nJOIN catalog_dataset s",
    "declared_column_lineage": "catalog_static_column_lineage",
    "outside_schema": "SELECT COUNT(*) FROM catalog_column_lineage_edge",
}


def _prepared() -> dict[str, int]:
    """Each prepared statement of this connection's reads (by ``STATEMENTS``) and how often
    it ran."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        rows = cursor.fetchall()
    found = {}
    for statement, runs in rows:
        for name, text in STATEMENTS.items():
            if text in statement:
                assert name not in found, f"{name} prepared twice: {statement}"
                found[name] = runs
    return found


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

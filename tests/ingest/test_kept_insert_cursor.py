"""The single-event INSERT runs on a cursor kept with its connection (ADR 0131), and is
wrapped, logged and refused as Django's cursor would."""

import pytest
from django.db import DataError, ProgrammingError, connection, transaction
from django.db.transaction import TransactionManagementError
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core import prepared
from ingest.models import Event
from tests.ingest.helpers import LINEAGE, dumps, run_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(fresh_connection: None, ingest_client: Client) -> Client:
    return ingest_client


def _post(client: Client, event: dict) -> int:
    return client.post(LINEAGE, dumps(event), content_type="application/json").status_code


def _kept() -> object:
    return getattr(connection, prepared._KEPT, None)


def test_single_events_on_one_connection_share_one_cursor(client) -> None:
    assert _post(client, run_event()) == 201
    kept = _kept()
    assert kept is not None and kept[0] is connection.connection  # type: ignore[index]
    event = run_event()
    assert _post(client, event) == 201
    assert _post(client, event) == 200  # the duplicate, answered from the same cursor
    assert _kept() is kept
    assert Event.objects.filter(payload=event).count() == 1


def test_a_new_connection_gets_a_new_cursor(client) -> None:
    assert _post(client, run_event()) == 201
    kept = _kept()
    connection.close()
    assert _post(client, run_event()) == 201
    renewed = _kept()
    assert renewed is not kept and renewed[0] is connection.connection  # type: ignore[index]


def test_a_logged_connection_logs_the_insert_on_a_cursor_of_its_own(client) -> None:
    with CaptureQueriesContext(connection) as queries:
        assert _post(client, run_event()) == 201
    assert sum("INSERT INTO ingest_event" in query["sql"] for query in queries) == 1
    kept = _kept()  # an earlier test's, on a connection closed since
    assert kept is None or kept[0] is not connection.connection  # type: ignore[index]


def test_an_execute_wrapper_sees_the_insert(client) -> None:
    seen: list[str] = []

    def wrapper(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        assert _post(client, run_event()) == 201
    assert sum("INSERT INTO ingest_event" in sql for sql in seen) == 1


def test_the_drivers_errors_arrive_as_djangos_and_the_cursor_goes_on(fresh_connection) -> None:
    assert prepared.kept_cursor_rows("SELECT %s::int + 1", (1,)) == [(2,)]
    with pytest.raises(DataError):
        prepared.kept_cursor_rows("SELECT 1 / %s::int", (0,))
    connection.errors_occurred = False
    with pytest.raises(ProgrammingError):
        prepared.kept_cursor_rows("SELECT no_such_column + %s::int", (1,))
    assert connection.errors_occurred  # noted: a broken connection is closed after the request
    assert prepared.kept_cursor_rows("SELECT %s::int + 1", (2,)) == [(3,)]


def test_a_broken_transaction_is_refused_as_djangos_cursor_refuses_it(fresh_connection) -> None:
    with transaction.atomic():
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            prepared.kept_cursor_rows("SELECT %s::int", (1,))

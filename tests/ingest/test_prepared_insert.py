"""The single-event INSERT is a prepared statement on kept connections only (ADR 0112)."""

import orjson
import pytest
from django.db import connection
from django.test import Client

from ingest.models import Event
from tests.ingest.helpers import LINEAGE, dumps, run_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(fresh_connection: None, ingest_client: Client) -> Client:
    return ingest_client


def _post(client: Client, event: dict) -> tuple[int, dict]:
    response = client.post(LINEAGE, dumps(event), content_type="application/json")
    return response.status_code, orjson.loads(response.content)


def _prepared_inserts() -> list[int]:
    """How often each prepared INSERT into ingest_event ran on this connection."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans + custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%%INSERT INTO ingest_event%%'"
        )
        return [row[0] for row in cursor.fetchall()]


def test_single_events_share_one_prepared_insert_and_answer_as_before(client) -> None:
    first, second = run_event(), run_event()
    assert _post(client, first)[0] == 201
    status, body = _post(client, second)
    assert status == 201 and body["status"] == "created"
    assert _post(client, first)[1]["status"] == "duplicate"  # the digest's conflict, prepared
    assert _prepared_inserts() == [3]
    stored = Event.objects.get(id=body["id"])
    assert stored.payload == second and stored.derivation_status == "pending"


def test_a_connection_closed_after_each_request_prepares_nothing(client) -> None:
    connection.ensure_connection()
    kept = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = 0
    try:
        assert _post(client, run_event())[0] == 201
        connection.ensure_connection()
        assert _prepared_inserts() == []
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = kept


def test_the_setting_turns_it_off(client, settings) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_INGEST_INSERT": False}
    assert _post(client, run_event())[0] == 201
    assert _prepared_inserts() == []


def test_batches_are_not_prepared(client) -> None:
    response = client.post(
        LINEAGE, dumps([run_event(), run_event()]), content_type="application/json"
    )
    assert response.status_code == 201
    assert _prepared_inserts() == []

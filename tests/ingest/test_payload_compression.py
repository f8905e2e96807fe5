"""Event payloads are stored lz4-compressed (ADR 0096): migration 0006 sets the column's
method, and a payload big enough to be compressed at all is compressed with it. Since
migration 0007 (ADR 0103) that is every row, also those under PostgreSQL's TOAST threshold,
and no small value of a row is moved out to the TOAST table."""

import orjson
import pytest
from django.db import connection

from ingest.derivation_status import DerivationStatus
from ingest.models import Event
from tests.ingest.helpers import LINEAGE, post_json, run_event

pytestmark = pytest.mark.django_db


def test_the_payload_column_compresses_with_lz4() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute "
            "WHERE attrelid = 'ingest_event'::regclass AND attname = 'payload'"
        )
        assert cursor.fetchone() == ("l",)


def test_a_large_event_is_stored_lz4_compressed_and_reads_back_whole(ingest_client) -> None:
    # Above PostgreSQL's TOAST threshold (about 2 KB a row) a payload is compressed.
    event = run_event()
    event["run"]["facets"] = {
        "note": {
            "_producer": "https://example.com/p",
            "_schemaURL": "https://example.com/s.json",
            "text": "the same words again " * 600,
        }
    }
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    event_id = response.json()["id"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(payload), pg_column_size(payload) "
            "FROM ingest_event WHERE id = %s",
            [event_id],
        )
        method, stored = cursor.fetchone()
    assert method == "lz4"
    assert stored < len(event["run"]["facets"]["note"]["text"]) / 2
    assert Event.objects.get(id=event_id).payload == event


def _scheduled_event(job: int) -> dict:
    """An event of about 1.2 KB of JSON: its row was under the TOAST threshold (ADR 0103)."""
    schema = {
        "_producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark",
        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
        "fields": [{"name": name, "type": "STRING"} for name in ("id", "value", "updated_at")],
    }
    facets = {"schema": schema}
    return run_event(
        job={"namespace": "airflow", "name": f"dag_{job}.task_{job}"},
        inputs=[{"namespace": "postgres://db:5432", "name": "src.orders", "facets": facets}],
        outputs=[{"namespace": "s3://lake", "name": "mart/daily", "facets": facets}],
    )


def _stored(event_id: int) -> tuple[str | None, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(payload), pg_column_size(payload) "
            "FROM ingest_event WHERE id = %s",
            [event_id],
        )
        return cursor.fetchone()


def _toast_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.relname FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid "
            "WHERE c.oid = 'ingest_event'::regclass"
        )
        (toast,) = cursor.fetchone()
        cursor.execute(f"SELECT count(*) FROM pg_toast.{toast}")
        return cursor.fetchone()[0]


def test_an_event_under_the_toast_threshold_is_stored_compressed(ingest_client) -> None:
    event = _scheduled_event(1)
    sent = len(orjson.dumps(event))
    assert 1000 < sent < 1500
    response = post_json(ingest_client, LINEAGE, event)
    assert response.status_code == 201
    event_id = response.json()["id"]
    method, stored = _stored(event_id)
    # jsonb is larger than its JSON: uncompressed, this payload took about 1.2x it.
    assert method == "lz4"
    assert stored < 0.8 * sent
    assert Event.objects.get(id=event_id).payload == event
    # A derivation status update keeps the compressed value (the new row is under the
    # threshold, so PostgreSQL copies the value as it is).
    Event.objects.filter(id=event_id).update(derivation_status=DerivationStatus.DERIVED)
    assert _stored(event_id) == (method, stored)


def test_no_small_value_of_a_row_goes_out_to_the_toast_table(ingest_client) -> None:
    # toast_tuple_target 128 keeps toasting going after the payload is compressed; every
    # value an EXTENDED column held over 24 bytes (the digest, the run id) would then be
    # moved to the TOAST table, one TOAST row each. STORAGE MAIN keeps them in the row.
    for job in range(3):
        assert post_json(ingest_client, LINEAGE, _scheduled_event(job)).status_code == 201
    assert Event.objects.count() == 3
    assert _toast_rows() == 0


def test_the_schema_url_is_read_from_the_payload(ingest_client) -> None:
    assert post_json(ingest_client, LINEAGE, run_event()).status_code == 201
    stored = Event.objects.get()
    assert stored.schema_url == run_event()["schemaURL"]

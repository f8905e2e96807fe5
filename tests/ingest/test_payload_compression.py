"""Event payloads are stored lz4-compressed (ADR 0096): migration 0006 sets the column's
method, and a payload big enough to be compressed at all is compressed with it."""

import pytest
from django.db import connection

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

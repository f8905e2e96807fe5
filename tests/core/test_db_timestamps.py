"""The C-speed timestamptz loader gives what Django's own loader gives (docs/adr/0054)."""

import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.postgres import types
from psycopg.pq import Format

from core.db_timestamps import UtcTimestamptzLoader
from ingest.models import Event

TIMESTAMPTZ = types["timestamptz"].oid


def _texts(sql: str) -> list[bytes]:
    """What PostgreSQL writes for each value of ``sql`` on this (UTC) connection."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT v::text FROM ({sql}) AS t(v)")
        return [row[0].encode() for row in cursor.fetchall()]


def _both(data: bytes) -> tuple[object, object]:
    """(ours, Django's) for one text value, each loader built on the live connection."""
    connection.ensure_connection()
    raw = connection.connection
    ours = UtcTimestamptzLoader(TIMESTAMPTZ, raw)
    with psycopg.ClientCursor(raw) as cursor:
        register_tzloader(UTC, cursor)
        django_loader = cursor.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)(TIMESTAMPTZ, cursor)
    results = []
    for loader in (ours, django_loader):
        try:
            results.append(loader.load(data))
        except Exception as error:  # the same error is the same answer
            results.append((type(error), str(error)))
    return results[0], results[1]


@pytest.mark.django_db
def test_installed_on_django_connections_and_used_by_the_orm() -> None:
    connection.ensure_connection()
    loader = connection.connection.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)
    assert loader is UtcTimestamptzLoader
    with connection.cursor() as cursor:
        cursor.execute("SELECT '2026-11-30 23:59:59.5+01'::timestamptz")
        (value,) = cursor.fetchone()
    assert value == datetime(2026, 11, 30, 22, 59, 59, 500000, tzinfo=UTC)
    assert value.tzinfo is UTC


@pytest.mark.django_db
def test_same_values_as_djangos_loader() -> None:
    rng = random.Random(11)
    start = datetime(1, 1, 1, tzinfo=UTC)
    spread = (datetime(9999, 12, 31, tzinfo=UTC) - start).total_seconds()
    moments = [start + timedelta(seconds=rng.uniform(0, spread)) for _ in range(300)]
    literals = ", ".join(f"('{moment.isoformat()}'::timestamptz)" for moment in moments)
    fixed = (
        "('0001-01-01 00:00:00+00'), ('1899-12-31 23:59:59.999999+00'), "
        "('1970-01-01 00:00:00+00'), ('2026-12-01 08:00:00.000001+00'), "
        "('9999-12-31 23:59:59.999999+00')"
    )
    texts = _texts(f"VALUES {literals}, {fixed}")
    assert len(texts) == 305
    for text in texts:
        ours, theirs = _both(text)
        assert ours == theirs, text
        assert ours.tzinfo is theirs.tzinfo is UTC, text


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text",
    [
        b"infinity",  # psycopg refuses these: the same error either way
        b"-infinity",
        b"0044-03-15 10:00:00+00 BC",
        b"2026-12-01 08:00:00+05:30",  # a session in another zone: Django's answer
        b"2026-12-01 08:00:00",  # no offset
        b"Tue Dec 01 08:00:00 2026 UTC",  # another DateStyle
        b"not a time",
    ],
)
def test_anything_else_falls_back_to_djangos_loader(text: bytes) -> None:
    ours, theirs = _both(text)
    assert ours == theirs


@pytest.mark.django_db
def test_model_fields_read_back_in_utc() -> None:
    moment = datetime(2026, 12, 1, 8, 0, 0, 123456, tzinfo=UTC)
    event = Event.objects.create(
        kind="openlineage", event_type="COMPLETE", event_time=moment, payload={}
    )
    loaded = Event.objects.values_list("event_time", "received_at").get(id=event.id)
    assert loaded[0] == moment and loaded[0].tzinfo is UTC
    assert loaded[1].tzinfo is UTC

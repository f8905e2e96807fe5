"""A kept connection that PostgreSQL closed (a restart, a terminated backend) is replaced
before a request uses it (core/postgresql/base.py, ADR 0146): the request is
answered as if nothing had happened, not with a 503."""

import time
from collections.abc import Iterator
from typing import Any

import orjson
import psycopg
import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connection

from config.read_front import ReadFrontPath
from ingest.fastpath import IngestFastPath
from ingest.services import create_token
from tests.api.factories import add_fields, make_dataset
from tests.api.test_read_front import call
from tests.ingest.helpers import run_event, second_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def other() -> Iterator[psycopg.Connection]:
    with second_connection() as second:
        yield second


def terminate(other: psycopg.Connection) -> int:
    """Have PostgreSQL end this thread's kept connection, as a restart ends every one, and
    wait until its backend is gone. Returns the backend's pid."""
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    other.execute("SELECT pg_terminate_backend(%s)", [backend])
    for _ in range(200):
        gone = other.execute(
            "SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = %s)", [backend]
        ).fetchone()
        if gone and gone[0]:
            return backend
        time.sleep(0.01)
    raise AssertionError(f"backend {backend} did not end")


def served_by(app: Any, other: psycopg.Connection, path: str, **extra: Any) -> None:
    """``path`` answers the same before and after its connection's backend was ended, on a
    new backend."""
    before = call(app, path, **extra)
    assert before[0] == 200, before[2]
    ended = terminate(other)
    after = call(app, path, **extra)
    assert after[0] == 200, after[2]
    assert after[2] == before[2]
    assert connection.connection.info.backend_pid != ended


@pytest.fixture
def detail() -> str:
    dataset = make_dataset("shop.public.orders")
    add_fields(dataset, "order_id")
    return f"/api/v1/datasets/{dataset.id}"


@pytest.fixture
def reader() -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {create_token('restart', 'read')[1]}"}


def test_a_read_in_front_of_django_is_answered_on_a_new_connection(other, detail, reader) -> None:
    served_by(ReadFrontPath(get_wsgi_application()), other, detail, **reader)


def test_a_read_through_djangos_handler_is_answered_on_a_new_connection(
    other, detail, reader
) -> None:
    served_by(get_wsgi_application(), other, detail, **reader)


def test_a_single_event_is_stored_on_a_new_connection(other) -> None:
    app = IngestFastPath(get_wsgi_application())
    token = {"HTTP_AUTHORIZATION": f"Bearer {create_token('restart', 'ingest')[1]}"}

    def post() -> int:
        body = orjson.dumps(run_event())
        return call(
            app,
            "/api/v1/lineage",
            method="POST",
            data=body,
            content_type="application/json",
            **token,
        )[0]

    assert post() == 201
    ended = terminate(other)
    assert post() == 201
    assert connection.connection.info.backend_pid != ended


def test_a_healthy_kept_connection_is_kept() -> None:
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    connection.close_if_unusable_or_obsolete()
    assert connection.connection is not None
    assert connection.connection.info.backend_pid == backend


def test_a_pipeline_in_flight_is_left_to_its_owner() -> None:
    """The Kafka consumer's INSERT in flight (``send_events``): its answer waiting on the
    socket is not a closed connection."""
    connection.ensure_connection()
    raw = connection.connection
    with raw.pipeline():
        raw.execute("SELECT 1")
        raw.pgconn.send_flush_request()
        raw.pgconn.flush()
        time.sleep(0.1)  # the answer arrives: the socket is readable
        connection.close_if_unusable_or_obsolete()
        assert connection.connection is raw

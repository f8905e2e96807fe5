"""The batch INSERT in two halves (ADR 0072): ``send_events`` returns while the server
stores, ``finish_events`` commits and answers. Against the real PostgreSQL: the events are
not visible to anyone (so no offset may be committed for them) until finished; a repeat
is answered as ``record_events`` answers it; a broken connection raises and stores
nothing; a caller's transaction is refused."""

import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from ingest.models import Event
from ingest.services import finish_events, record_events, send_events
from ingest.validation import validate_openlineage
from tests.ingest.helpers import run_event, second_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def other() -> Iterator[psycopg.Connection]:
    with second_connection() as second:
        yield second


def records(count: int) -> list:
    return [validate_openlineage(run_event()) for _ in range(count)]


def stored(other: psycopg.Connection) -> int:
    row = other.execute("SELECT count(*) FROM ingest_event").fetchone()
    assert row is not None
    return int(row[0])


def test_nothing_is_visible_until_finished_then_every_event_once(other) -> None:
    events = records(3)
    in_flight = send_events(events)
    deadline = time.monotonic() + 10
    while not in_flight.answered() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert in_flight.answered()
    assert stored(other) == 0  # stored by the server, not yet committed
    answers = finish_events(in_flight)
    assert [answer.created for answer in answers] == [True, True, True]
    assert stored(other) == 3
    # The connection is usable again as usual, and a repeat is answered with the first id.
    again = record_events(events[:1] + records(1))
    assert again[0].id == answers[0].id and not again[0].created and again[1].created
    assert Event.objects.count() == 4


def test_a_repeat_in_flight_gets_the_first_copys_id(other) -> None:
    events = records(2)
    first = record_events(events[:1])
    answers = finish_events(send_events([events[0], events[1], events[1]]))
    assert answers[0].id == first[0].id and not answers[0].created
    assert answers[1].created and answers[2].id == answers[1].id and not answers[2].created
    assert stored(other) == 2


def test_a_write_held_by_a_lock_is_not_answered_until_the_lock_goes(other) -> None:
    with other.transaction():
        other.execute("LOCK TABLE ingest_event IN SHARE MODE")  # INSERTs wait
        in_flight = send_events(records(2))
        time.sleep(0.5)
        assert not in_flight.answered()
    answers = finish_events(in_flight)
    assert all(answer.created for answer in answers) and stored(other) == 2


def test_a_connection_broken_in_flight_raises_and_stores_nothing(other) -> None:
    with other.transaction():
        other.execute("LOCK TABLE ingest_event IN SHARE MODE")
        in_flight = send_events(records(2))
        time.sleep(0.2)
        backend = connection.connection.info.backend_pid
        other.execute("SELECT pg_terminate_backend(%s)", [backend])
    with pytest.raises(DatabaseError):
        finish_events(in_flight)
    assert stored(other) == 0
    assert len(record_events(records(1))) == 1  # a new connection serves the next write
    assert stored(other) == 1


def test_inside_a_transaction_it_refuses_to_start() -> None:
    with transaction.atomic(), pytest.raises(RuntimeError, match="cannot join a transaction"):
        send_events(records(1))

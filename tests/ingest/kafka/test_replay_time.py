"""The admin's dead-letter replay is a web request: it ends within
``LINEAGE_KAFKA_REPLAY_SECONDS`` whatever Kafka does, leaves the letters it did not reach
open, and says how many (docs/ingest.md, ADR 0163). Each letter read from Kafka had its own
reader and up to 10 s when no answer came: 500 of them held a web thread over an hour.

The bound is set to 1.5 s here; the slack allows for one letter's pipeline and the admin's
page."""

import socket
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from django.contrib.auth.models import User
from django.test import Client

from ingest.models import DeadLetter, Event
from tests.fresh_python import printed
from tests.ingest.kafka.test_consume import ol_event_dict

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = 1.5  # LINEAGE_KAFKA_REPLAY_SECONDS in these tests
SLACK = 1.0


@pytest.fixture
def steward() -> Client:
    user = User.objects.create_superuser("timed", "t@example.com", "pw-timed")
    client = Client()
    client.force_login(user)
    # The first page loads the admin's templates and modules: not the replay's time.
    assert client.get("/admin/ingest/deadletter/").status_code == 200
    return client


@pytest.fixture
def silent_broker() -> Iterator[str]:
    """An address that takes connections and never answers: the kernel completes them for
    the backlog, and nobody reads (a broker hung, or a firewall that swallows replies)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def kafka_at(settings: Any, bootstrap: str, seconds: float = BOUND) -> None:
    settings.LINEAGE_KAFKA = {
        **settings.LINEAGE_KAFKA,
        "BOOTSTRAP_SERVERS": bootstrap,
        "TOPICS": ["lineage-2"],
        "REPLAY_SECONDS": seconds,
    }


def kept_in_part(topic: str, partition: int, offsets: range) -> list[int]:
    """Letters whose value the table keeps only a prefix of: a replay reads them from Kafka."""
    letters = DeadLetter.objects.bulk_create(
        DeadLetter(
            topic=topic,
            partition=partition,
            offset=offset,
            kind="openlineage",
            value=b'{"eventType": ',
            value_size=4000,
            reason_code="invalid-event",
            reason="before the fix",
        )
        for offset in offsets
    )
    return [letter.id for letter in letters]


def kept_whole(number: int) -> int:
    """A letter the table keeps whole, and a valid event: a replay stores it."""
    body = orjson.dumps(ol_event_dict(number))
    return DeadLetter.objects.create(
        topic="lineage-2",
        partition=3,
        offset=50_000 + number,
        kind="openlineage",
        value=body,
        value_size=len(body),
        reason_code="invalid-event",
        reason="before the fix",
    ).id


def replay_timed(client: Client, ids: list[int]) -> tuple[float, str]:
    started = time.monotonic()
    answer = client.post(
        "/admin/ingest/deadletter/",
        {"action": "replay_selected", "_selected_action": ids},
        follow=True,
    )
    took = time.monotonic() - started
    assert answer.status_code == 200
    return took, answer.content.decode()


def test_a_broker_that_does_not_answer_costs_the_bound(
    settings: Any, steward: Client, silent_broker: str
) -> None:
    """Three letters read from a broker that never answers took 10 s each (30 s); the rest
    of a 500-letter selection waited the same. Now the action ends at the bound and leaves
    them all open, their reasons as they were."""
    kafka_at(settings, silent_broker)
    ids = kept_in_part("lineage-2", 0, range(3))
    took, page = replay_timed(steward, ids)
    assert took < BOUND + SLACK, f"the replay took {took:.1f} s (bound {BOUND} s)"
    assert "unavailable 0, not reached 3 (a replay stops after LINEAGE_KAFKA_REPLAY_SECONDS" in page
    open_letters = DeadLetter.objects.filter(id__in=ids, replayed_at__isnull=True)
    assert set(open_letters.values_list("reason", flat=True)) == {"before the fix"}
    assert open_letters.count() == 3


def test_a_topic_that_is_gone_is_said_at_once_and_what_came_first_is_replayed(
    bootstrap: str, settings: Any, steward: Client
) -> None:
    """A letter of a topic the cluster no longer has was waited for 10 s, and so was each
    after it; then, within the bound, those left were not reached. Kafka says the topic is
    not there (ADR 0169): they are gone at once, and one replayed before them is stored."""
    kafka_at(settings, bootstrap)
    stored = kept_whole(1)
    gone = kept_in_part("lineage-deleted", 0, range(4))
    took, page = replay_timed(steward, [stored, *gone])
    assert took < BOUND + SLACK, f"the replay took {took:.1f} s (bound {BOUND} s)"
    assert "Stored 1," in page
    assert "gone from Kafka 4 (" in page and "4 of a topic or partition the cluster" in page
    assert "unavailable 0, not reached 0." in page
    assert DeadLetter.objects.get(id=stored).replayed_at is not None
    assert not DeadLetter.objects.filter(id__in=gone, replayed_at__isnull=False).exists()


def test_one_reader_reads_each_letter_at_its_own_offset(
    bootstrap: str, settings: Any, steward: Client
) -> None:
    """The replay's one reader, assigned to each letter in turn (two partitions, offsets
    out of order by id), hands each letter its own message: each is stored as its event.
    (The bound is generous here: with librdkafka's fetch back-off left at 1 s some of the
    new assignments wait a second, how many is a race, so that is measured, not pinned.)"""
    kafka_at(settings, bootstrap, seconds=3.0)
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition in (1, 2):
        for number in range(4):
            event = orjson.dumps(ol_event_dict(10 * partition + number))
            producer.produce("lineage-2", value=event, partition=partition)
    assert producer.flush(10) == 0
    ids: list[int] = []
    for partition, offset in ((2, 3), (1, 0), (2, 1), (1, 3), (1, 2), (2, 0)):
        ids += kept_in_part("lineage-2", partition, range(offset, offset + 1))
    _, page = replay_timed(steward, ids)
    assert "Stored 6," in page, page[page.find("messagelist") :][:1500]
    for letter in DeadLetter.objects.filter(id__in=ids):
        event = Event.objects.get(id=letter.replayed_event_id)
        assert event.job_name == f"job-{10 * letter.partition + letter.offset}"


def test_the_bound_is_read_from_its_variable_and_not_given_to_librdkafka() -> None:
    """LINEAGE_KAFKA_<SETTING> is librdkafka's, but for the project's own: "replay.seconds"
    given to librdkafka would stop every consumer and replay with an unknown property."""
    code = (
        "from django.conf import settings as s; "
        "print(s.LINEAGE_KAFKA['REPLAY_SECONDS'], 'REPLAY_SECONDS' in s.LINEAGE_KAFKA['CLIENT'])"
    )
    assert printed(code, LINEAGE_KAFKA_REPLAY_SECONDS="7.5").split() == ["7.5", "False"]

"""The admin's dead-letter replay tells a message Kafka no longer holds from a Kafka that does
not answer, each with its own count and reason, and waits for neither longer than it takes
to know (docs/ingest.md, ADR 0169).

Both were "unavailable (only a prefix was kept and the topic no longer holds the message)":
a broker that refused connections was called gone at once, and a letter on an empty
partition (or at its end) was waited for 10 s, or the whole replay's time, for a message
that could not come. A replay's time here is 5 s: a letter waited for until then is
counted "not reached", which no letter below should be."""

import html
import os
import socket
from typing import Any

import orjson
import pytest
from confluent_kafka import Producer
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client

from ingest.kafka import reader as kafka_reader
from ingest.models import DeadLetter, Event
from tests.ingest.kafka.test_consume import ol_event_dict
from tests.ingest.kafka.test_replay_time import kafka_at, kept_in_part, replay_timed

pytestmark = pytest.mark.django_db(transaction=True)

SECONDS = 5.0  # LINEAGE_KAFKA_REPLAY_SECONDS in these tests


@pytest.fixture
def steward() -> Client:
    user = User.objects.create_superuser("gone", "g@example.com", "pw-gone")
    client = Client()
    client.force_login(user)
    return client


def test_a_message_kafka_no_longer_holds_is_gone_at_once_and_the_rest_are_read(
    bootstrap: str, settings: Any, steward: Client
) -> None:
    """Partition 0 held eight messages of 900 kB, and the mock cluster keeps the last 5 MB
    of a partition: its first offset is 3 (retention). Partition 1 holds two events,
    partition 2 nothing. Letters below the first offset, on the empty partition, at and past
    the end, and of a topic the cluster does not have are gone, each said at once; the two
    events, one after the gone letters, are stored by the same replay."""
    kafka_at(settings, bootstrap, seconds=SECONDS)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for _ in range(8):
        producer.produce("lineage", value=os.urandom(900_000), partition=0)
        assert producer.flush(10) == 0  # one batch each: the mock drops whole batches
    for number in range(2):
        producer.produce("lineage", value=orjson.dumps(ol_event_dict(number)), partition=1)
    assert producer.flush(10) == 0
    del producer  # not kept, by a failure's traceback, calling the cluster after it stopped
    below = kept_in_part("lineage", 0, range(1))
    empty = kept_in_part("lineage", 2, range(1))
    [first] = kept_in_part("lineage", 1, range(1))
    past = kept_in_part("lineage", 1, range(2, 4))  # at the end, and past it
    no_topic = kept_in_part("lineage-deleted", 0, range(1))
    [second] = kept_in_part("lineage", 1, range(1, 2))
    gone = below + empty + past + no_topic
    took, page = replay_timed(steward, [*below, *empty, first, *past, *no_topic, second])
    print(f"seven letters, five gone: {took:.2f} s")
    said = html.unescape(page[page.find("messagelist") :][:2000])
    assert (
        "Stored 2, refused again 0 (the reason is updated), too large 0, gone from Kafka 5 ("
        in said
    ), said
    assert (
        "Kafka says the message is no longer there: 1 below their partition's first offset "
        "(deleted by retention); 3 at or past their partition's end" in said
    ), said
    assert "; 1 of a topic or partition the cluster no longer has." in said, said
    assert "no answer from Kafka 0, unavailable 0, not reached 0." in said, said
    replayed = DeadLetter.objects.filter(id__in=[first, second]).order_by("offset")
    events = [Event.objects.get(id=letter.replayed_event_id) for letter in replayed]
    assert [event.job_name for event in events] == ["job-0", "job-1"]
    # Left open, their reasons as they were; the admin's log says what Kafka said of each.
    letters = DeadLetter.objects.filter(id__in=gone, replayed_at__isnull=True)
    assert set(letters.values_list("reason", flat=True)) == {"before the fix"}
    assert letters.count() == 5
    logged = dict(
        LogEntry.objects.filter(object_id__in=[str(i) for i in gone]).values_list(
            "object_id", "change_message"
        )
    )
    assert logged[str(below[0])] == (
        "Replayed: gone from Kafka (offset 0 is below the partition's first offset (3))."
    )
    assert "is at or past the partition's end" in logged[str(empty[0])]
    assert "topic does not exist" in logged[str(no_topic[0])]


def test_a_kafka_that_cannot_be_reached_or_does_not_answer_is_no_answer(
    monkeypatch: pytest.MonkeyPatch, settings: Any, steward: Client
) -> None:
    """A broker that refuses connections: its letters were called gone ("the topic no
    longer holds the message") at once. One that takes connections and never answers,
    with the reader's wait for a letter lowered from 10 s to 0.3 s: its letter was called
    gone after the wait. Both are "no answer from Kafka", with librdkafka's words or the
    wait, and left open."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{closed.getsockname()[1]}"
    closed.close()  # nobody listens there: connections are refused
    kafka_at(settings, address, seconds=SECONDS)
    refused = kept_in_part("lineage", 0, range(2))
    took, page = replay_timed(steward, refused)
    print(f"two letters, connections refused: {took:.2f} s")
    said = html.unescape(page[page.find("messagelist") :][:2000])
    assert "gone from Kafka 0, no answer from Kafka 2 (Kafka did not answer within 10 s" in said
    assert "Connection refused" in said and "The messages may still be there" in said, said
    assert "not reached 0." in said, said

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # connections completed by the kernel, never read
    try:
        kafka_at(settings, f"127.0.0.1:{listener.getsockname()[1]}", seconds=SECONDS)
        monkeypatch.setattr(kafka_reader, "READ_SECONDS", 0.3)
        silent = kept_in_part("lineage", 1, range(1))
        took, page = replay_timed(steward, silent)
    finally:
        listener.close()
    print(f"one letter, a silent broker, a 0.3 s wait: {took:.2f} s")
    said = html.unescape(page[page.find("messagelist") :][:2000])
    assert "gone from Kafka 0, no answer from Kafka 1 (" in said, said
    assert "the last said: no answer in 0.3 s. The messages" in said, said
    assert "not reached 0." in said, said
    open_letters = DeadLetter.objects.filter(id__in=refused + silent, replayed_at__isnull=True)
    assert set(open_letters.values_list("reason", flat=True)) == {"before the fix"}
    assert open_letters.count() == 3

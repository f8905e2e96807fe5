"""The consumer's probe port under a flood and a slowloris (ADR 0177): PostgreSQL's
connections stay bounded, a request head sent a byte at a time is cut off at
``CONNECTION_SECONDS``, and the probes are answered meanwhile."""

import contextlib
import http.client
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from django.db import connection

from ingest.bounded_server import configured_limits
from ingest.kafka import config as kafka_config
from ingest.kafka.consumer import IngestConsumer
from ingest.kafka.health import ProbeServer, serve

# Transactional: the probe's check connects to the test database from its own thread.
pytestmark = pytest.mark.django_db(transaction=True)

FLOODERS = 40  # clients asking /readyz as fast as they are answered
FLOOD_REQUESTS = 400  # answered or refused, before the flood stops
LIMITS = configured_limits()  # the defaults: nothing sets LINEAGE_BOUNDED_PORT_*
CONNECTION_SECONDS = LIMITS.connection_seconds
SLOW = LIMITS.handlers + LIMITS.waiting + 4  # slowloris connections at once


@pytest.fixture
def probes(bootstrap: str) -> Iterator[ProbeServer]:
    config = kafka_config.load(
        {
            "BOOTSTRAP_SERVERS": bootstrap,
            "TOPICS": ["lineage"],
            "GROUP_ID": f"probes-{uuid.uuid4().hex[:8]}",
            "PORT": 0,
        }
    )
    consumer = IngestConsumer(config)
    server = serve(consumer, 0, host="127.0.0.1")
    try:
        yield server
    finally:
        server.shutdown()
        consumer.consumer.close()


def answered_status(port: int, path: str) -> int:
    """The answer's status, 0 when there was none."""
    try:
        return status(port, path)
    except OSError:
        return 0


def status(port: int, path: str) -> int:
    """The answer's status; raises OSError when there was none within 10 s."""
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        client.request("GET", path)
        answer = client.getresponse()
        answer.read()
        return answer.status
    finally:
        client.close()


def others_connected() -> int:
    """Clients' PostgreSQL backends on this test's database other than the test's own (not
    autovacuum's)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        (count,) = cursor.fetchone()
    return int(count)


def test_a_readyz_flood_holds_at_most_one_database_connection_and_is_answered(
    probes: ProbeServer,
) -> None:
    """Each /readyz opened a connection of its own on a thread of its own: 40 clients held
    up to 40 of PostgreSQL's connections (max_connections is 100 by default)."""
    port = probes.server_address[1]
    assert status(port, "/readyz") == 200
    before = others_connected()
    stop = threading.Event()
    answered: list[int] = []
    unanswered: list[OSError] = []

    def flood() -> None:
        while not stop.is_set():
            try:
                answered.append(status(port, "/readyz"))
            except OSError as error:  # refused when too many: reset before it was read
                unanswered.append(error)

    def probe() -> None:  # the kubelet's liveness probe, during the flood
        while not stop.is_set():
            probed.append(answered_status(port, "/healthz"))
            time.sleep(0.1)

    probed: list[int] = []
    clients = [threading.Thread(target=flood) for _ in range(FLOODERS)]
    clients.append(threading.Thread(target=probe))
    for thread in clients:
        thread.start()
    most, samples = 0, 0
    try:
        give_up = time.monotonic() + 120  # a bound on a broken build, not a speed
        while len(answered) + len(unanswered) < FLOOD_REQUESTS and time.monotonic() < give_up:
            most, samples = max(most, others_connected()), samples + 1
    finally:
        stop.set()
        for thread in clients:
            thread.join()
    print(
        f"flood: {len(answered)} answered ({answered.count(200)} ready, {answered.count(503)} "
        f"503), {len(unanswered)} unanswered; {len(probed)} liveness probes {set(probed)}; "
        f"backends {before} before, at most {most} during ({samples} samples)"
    )
    assert len(answered) + len(unanswered) >= FLOOD_REQUESTS
    assert most <= before + 1
    assert set(answered) <= {200, 503} and 200 in answered  # checks answered from the cache
    assert set(probed) <= {200, 503} and 200 in probed
    assert status(port, "/readyz") == 200  # and ready once it is over


def test_slowloris_connections_are_cut_off_at_the_limit_and_hold_no_thread_each(
    probes: ProbeServer,
) -> None:
    """A request head sent a byte at a time held its connection, and a thread of its own,
    for ever: the handlers had no timeout and their number no bound. Here more of them
    than the server has handlers and waiting places."""
    port = probes.server_address[1]
    threads = threading.active_count()
    opened = time.monotonic()
    slow = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(SLOW)]
    closed_after: dict[socket.socket, float] = {}
    during: list[tuple[int, int]] = []
    most_threads = threads
    done = threading.Event()

    def probe() -> None:  # the kubelet's probes, meanwhile
        while not done.is_set() and len(during) < 4:
            during.append((answered_status(port, "/healthz"), answered_status(port, "/readyz")))
            time.sleep(0.2)

    prober = threading.Thread(target=probe)
    try:
        for each in slow:
            each.sendall(b"GET /readyz HTTP/1.1\r\nHost: probes\r\nX-Slow: ")
        prober.start()
        while len(closed_after) < SLOW and time.monotonic() - opened < CONNECTION_SECONDS + 10:
            open_ones = [each for each in slow if each not in closed_after]
            readable, _, _ = select.select(open_ones, [], [], 0.25)
            for each in readable:  # closed, after a 503 for those past the bounds
                with contextlib.suppress(OSError):
                    each.recv(4096)
                closed_after[each] = time.monotonic() - opened
            for each in open_ones:
                if each not in readable:
                    each.sendall(b"a")
            most_threads = max(most_threads, threading.active_count() - 1)  # not the prober
    finally:
        done.set()
        prober.join()
        for each in slow:
            each.close()
    longest = max(closed_after.values(), default=None)
    print(
        f"{SLOW} slowloris connections: {len(closed_after)} closed, the last after {longest} "
        f"s; threads {threads} before, at most {most_threads}; probes meanwhile {during}"
    )
    assert len(closed_after) == SLOW, "slowloris connections were still open"
    assert longest is not None and longest < CONNECTION_SECONDS + 5  # with room for load
    assert most_threads == threads
    # Answered, not left waiting: 503 at once while every place is taken.
    assert during and set(during) <= {(200, 200), (503, 503)}
    assert (status(port, "/healthz"), status(port, "/readyz")) == (200, 200)

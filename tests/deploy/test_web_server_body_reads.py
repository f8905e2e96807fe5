"""A request body sent a byte at a time holds no more than its share of the shipped web
server's threads (ADR 0197, core/body_reads.py). granian hands a request to a Python thread
once its head has arrived, and that thread waits in ``wsgi.input`` for as long as the peer
takes: on main, peers trickling more bodies than there are threads (2 workers x 4 here)
kept the liveness probe and every other producer waiting. Real processes, real sockets: the
server as the chart starts it and peers that send their heads whole and their bodies one
byte at a time (bench/port_hold.py --slow-body)."""

import contextlib
import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from core.body_reads import PLACE_WAIT_SECONDS
from ingest.services import create_token
from tests.deploy.test_web_server import Server, started_server
from tests.deploy.test_web_server_slots import LIVENESS_TIMEOUT, probe
from tests.ingest.helpers import LINEAGE, run_event

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

THREADS = 4  # a worker's: 3 may read bodies, 2 of them for one sender
SLOW = 12  # more slow bodies than the 2 workers' 8 threads


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with started_server(tmp_path, WEB_THREADS=str(THREADS)) as running:
        yield running


def slow_body(port: int, target: str, kind: str, token: str = "") -> socket.socket:
    """A connection that sent a whole head announcing 100,000 bytes and one byte of them."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    connection.sendall(
        f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {kind}\r\n{auth}"
        "Content-Length: 100000\r\n\r\n{".encode()
    )
    return connection


def answer_of(connection: socket.socket, seconds: float) -> bytes | None:
    """What the server answered ``connection`` within ``seconds``: None if nothing came and
    the connection is still open (its body still being read), b"" if the server closed it
    without a word."""
    connection.settimeout(seconds)
    try:
        return connection.recv(4096)
    except TimeoutError:
        return None


def produce(port: int, token: str) -> tuple[int, float]:
    """Another producer's event on a new connection: its status and seconds."""
    started = time.monotonic()
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=LIVENESS_TIMEOUT)
    try:
        client.request(
            "POST",
            LINEAGE,
            body=orjson.dumps(run_event()),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        )
        status = client.getresponse().status
    except OSError:
        status = 0
    finally:
        client.close()
    return status, time.monotonic() - started


def served_while_held(server: Server, held: list[socket.socket]) -> None:
    """The probe and another producer are answered within the probe's timeout, 3 times,
    while ``held`` trickle on; the bodies past their share were refused at once, unread."""
    producer = create_token("other producer", "ingest")[1]
    # Every held request has reached its read, or its refusal: a refused one waited
    # PLACE_WAIT_SECONDS for a place, and those queued behind it as long again.
    time.sleep(1 + 2 * PLACE_WAIT_SECONDS)
    answers = [answer_of(connection, 0.2) for connection in held]
    for _ in range(3):
        for connection in held:
            with contextlib.suppress(OSError):
                connection.send(b" ")
        assert probe(server.port)[0] == "HTTP/1.1 200 OK"
        status, seconds = produce(server.port, producer)
        assert status == 201, (status, seconds)
    refused = [answer for answer in answers if answer]
    # At most two slow bodies a worker are read for one sender: the others were answered.
    assert len(refused) >= SLOW - 4, answers
    # The bodies that were not refused are still being read, not dropped unanswered.
    assert all(answer is None for answer in answers if not answer), answers
    for answer in refused:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 "), answer
        assert b"\r\nretry-after: 5" in head.lower() and b"\r\nconnection: close" in head.lower()
        problem = orjson.loads(body)
        assert problem["type"] == "urn:lineage-catalog:problem:body-readers-busy", problem
        assert problem["status"] == 503


def test_one_tokens_slow_bodies_leave_the_probe_and_other_producers_served(
    server: Server,
) -> None:
    holder = create_token("slow producer", "ingest")[1]
    held = [slow_body(server.port, LINEAGE, "application/json", holder) for _ in range(SLOW)]
    try:
        served_while_held(server, held)
    finally:
        for connection in held:
            connection.close()


def test_anonymous_slow_forms_leave_the_probe_and_producers_served(server: Server) -> None:
    # The admin's login form is read before anyone is authenticated (and its NUL guard
    # reads any form posted under /admin/): anonymous peers share one sender's part.
    form = "application/x-www-form-urlencoded"
    held = [slow_body(server.port, "/admin/login/", form) for _ in range(SLOW)]
    try:
        served_while_held(server, held)
    finally:
        for connection in held:
            connection.close()


def test_one_tokens_slow_bodies_with_anonymous_slow_forms_leave_other_producers_served(
    server: Server,
) -> None:
    # A token's holder can add anonymous bodies to its own (the admin's login form): counted
    # as a sender apart, its share and theirs took every place of both workers and the other
    # producer was answered 503 (ADR 0207).
    holder = create_token("slow producer", "ingest")[1]
    form = "application/x-www-form-urlencoded"
    held = [slow_body(server.port, LINEAGE, "application/json", holder) for _ in range(SLOW // 2)]
    held += [slow_body(server.port, "/admin/login/", form) for _ in range(SLOW // 2)]
    try:
        served_while_held(server, held)
    finally:
        for connection in held:
            connection.close()


def test_a_slow_body_without_a_token_is_answered_401_unread(server: Server) -> None:
    # The ingest endpoints authenticate from the head: a missing or unknown token is
    # answered before the body is read, so it holds no thread at all.
    for token in ("", "lc_ingest_unknown"):
        for target in (LINEAGE, "/api/v1/lineage/batch"):
            connection = slow_body(server.port, target, "application/json", token)
            with connection:
                answer = answer_of(connection, LIVENESS_TIMEOUT)
                assert answer is not None and answer.startswith(b"HTTP/1.1 401 "), answer

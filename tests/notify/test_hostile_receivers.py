"""Receivers that answer in ways ``http.server`` cannot: the promises of docs/notifications.md
a hostile or broken receiver could break. A raw socket server started by the test answers
each POST as the test says: its status line and headers one slow piece at a time (every
piece inside the per-byte read timeout, the whole far past the answer limit), or with NUL
bytes, which PostgreSQL's text columns refuse, in the answer it sends back. Each try must end
within its limits as a failed try, be recorded, and go on to dead after the last attempt."""

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import pytest

from catalog.models import DeliveryStatus, WebhookSubscription
from catalog.notify import delivery
from tests.notify.conftest import FAST
from tests.notify.slow_receiver import accept_in_threads

pytestmark = pytest.mark.django_db

ATTEMPTS = int(FAST["MAX_ATTEMPTS"])
# What a loaded machine may add to a bounded try: well under what each bug below takes.
SLACK = 2.5

Answer = Callable[[socket.socket], None]


@contextmanager
def raw_receiver(answer: Answer) -> Iterator[str]:
    """A URL whose server reads each request and hands the socket to ``answer``."""
    server = socket.create_server(("127.0.0.1", 0))

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            with suppress(OSError):  # the sender gave up and closed the connection
                answer(conn)

    accept_in_threads(server, handle)
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    finally:
        server.close()


def trickling_headers(conn: socket.socket) -> None:
    """A 200 whose headers take 40 x 0.2 s = 8 s: each piece well inside the 0.5 s read
    timeout, the whole eight times the 1 s answer limit."""
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(40):
        conn.sendall(b"X-Slow: 1\r\n")
        time.sleep(0.2)
    conn.sendall(b"Content-Length: 0\r\n\r\n")


def test_an_answer_trickled_past_the_answer_limit_is_a_failed_try_within_the_limit(
    allow_loopback: None,
) -> None:
    with raw_receiver(trickling_headers) as url:
        subscription = WebhookSubscription.objects.create(name="trickle", url=url)
        sent = delivery.test_send(subscription)
        started = time.monotonic()
        status = delivery.deliver(str(sent.id))
        took = time.monotonic() - started
    # The whole answer (status line and headers included) is bounded by ANSWER_SECONDS, so
    # a try never outlives its lease (connect + answer + 5 s), past which the sweep would
    # send the same delivery again while this try still runs.
    # The slack is for a loaded machine (a CI run's own workers); the bug takes 8 s.
    assert took < FAST["ANSWER_SECONDS"] + SLACK, took
    assert took < delivery.lease_seconds()
    assert status == DeliveryStatus.FAILED
    sent.refresh_from_db()
    assert sent.last_status_code is None and "ANSWER_SECONDS" in sent.last_error


def nul_in_body(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 500 Oops\r\nContent-Length: 5\r\n\r\nno\x00pe")


def nul_in_status_line(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 \x00\x00\r\n\r\n")


@pytest.mark.parametrize("answer", [nul_in_body, nul_in_status_line])
def test_an_answer_with_nul_bytes_is_recorded_and_goes_dead(
    allow_loopback: None, answer: Answer
) -> None:
    with raw_receiver(answer) as url:
        subscription = WebhookSubscription.objects.create(name="nul", url=url)
        sent = delivery.test_send(subscription)
        statuses = [delivery.deliver(str(sent.id)) for _ in range(ATTEMPTS)]
    # Each try is recorded (not left claimed, to come back after every lease, forever).
    assert statuses == ["failed"] * (ATTEMPTS - 1) + ["dead"]
    sent.refresh_from_db()
    assert sent.claim is None and sent.attempts == ATTEMPTS
    assert "\x00" not in sent.response_excerpt + sent.last_error
    assert sent.response_excerpt == ("no\ufffdpe" if answer is nul_in_body else "")


def test_a_name_that_resolves_slowly_is_a_failed_try_within_the_connect_limit(
    allow_loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receiver's owner controls its name's DNS: a resolver's retries over servers that
    do not answer add up to tens of seconds (here 6 s, six times the connect limit), which
    must not hold a try past its lease."""
    real = socket.getaddrinfo

    def slow_dns(host: str, *args: object, **kwargs: object) -> object:
        if host == "slow.example":
            time.sleep(6)
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", slow_dns)
    subscription = WebhookSubscription.objects.create(
        name="slow dns", url="http://slow.example/hook"
    )
    sent = delivery.test_send(subscription)
    started = time.monotonic()
    status = delivery.deliver(str(sent.id))
    took = time.monotonic() - started
    assert took < FAST["CONNECT_TIMEOUT_SECONDS"] + SLACK, took  # the bug takes 6 s
    assert status == DeliveryStatus.FAILED
    sent.refresh_from_db()
    assert "slow.example does not resolve within" in sent.last_error


def test_a_lookup_in_a_forked_worker_runs(allow_loopback: None) -> None:
    """Celery's prefork pool and gunicorn fork their workers: a lookup pool made in the
    parent has no threads in the child, which must make its own (or every lookup there
    would wait out its limit and fail)."""
    from catalog.notify import addresses

    assert addresses.resolve("http://127.0.0.1:9/x").address == "127.0.0.1"  # parent's pool
    child = os.fork()
    if child == 0:  # the child: exit at once with the answer, touching nothing else
        try:
            ok = addresses.resolve("http://127.0.0.1:9/x").address == "127.0.0.1"
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0

"""core/body_reads.py in process: which body reads wait and which are refused, and what a
refused request is answered (ADR 0197). tests/deploy/test_web_server_body_reads.py checks
the same against the shipped server and peers that trickle their bodies."""

import io
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from django.core.exceptions import BadRequest

from core.body_reads import TOKEN, BodyReads
from tests.wsgi_answer import wsgi_answer


class Trickle(io.RawIOBase):
    """A body whose reads wait until ``arrived`` is set, as granian's ``wsgi.input`` waits
    on a peer."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.waiting = threading.Event()

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        self.waiting.set()
        assert self.arrived.wait(10)
        return b"{}"


def reading_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """Reads the body as the views do; a refused read answered 400 as Django and DRF do."""
    try:
        body = environ["wsgi.input"].read()
    except BadRequest:
        start_response("400 Bad Request", [("Content-Type", "text/plain")])
        return [b"refused"]
    start_response("201 Created", [("Content-Type", "application/json")])
    return [body]


def environ(stream: Any, token: int | None = None, length: str = "2") -> dict[str, Any]:
    found: dict[str, Any] = {"REQUEST_METHOD": "POST", "wsgi.input": stream}
    if length:
        found["CONTENT_LENGTH"] = length
    if token is not None:
        found[TOKEN] = token  # what ingest.authentication sets before any read
    return found


@pytest.fixture
def reads() -> BodyReads:
    return BodyReads(reading_app, limit=3)  # one sender may hold 2 of the 3


class Held:
    """A request whose body read is waiting on its peer, in a thread of its own."""

    def __init__(self, reads: BodyReads, token: int | None) -> None:
        self.stream = Trickle()
        self.answer: tuple[int, dict[str, str], bytes] | None = None
        self.thread = threading.Thread(target=self.run, args=(reads, token))
        self.thread.start()
        assert self.stream.waiting.wait(10)

    def run(self, reads: BodyReads, token: int | None) -> None:
        self.answer = wsgi_answer(reads, environ(self.stream, token))

    def finish(self) -> tuple[int, dict[str, str], bytes]:
        self.stream.arrived.set()
        self.thread.join(10)
        assert self.answer is not None
        return self.answer


@pytest.fixture
def held(reads: BodyReads) -> Iterator[list[Held]]:
    waiting: list[Held] = []
    yield waiting
    for each in waiting:
        each.stream.arrived.set()
        each.thread.join(10)


def refused(answer: tuple[int, dict[str, str], bytes]) -> bool:
    status, headers, body = answer
    if status != 503:
        return False
    assert headers["Retry-After"] == "5" and headers["Connection"] == "close"
    assert headers["Content-Type"] == "application/problem+json"
    assert headers["Content-Length"] == str(len(body))
    assert orjson.loads(body)["type"] == "urn:lineage-catalog:problem:body-readers-busy"
    return True


def test_a_sender_holds_at_most_its_share_and_all_of_them_one_thread_less(
    reads: BodyReads, held: list[Held]
) -> None:
    held.extend([Held(reads, token=1), Held(reads, token=1)])
    # The same token again: its share (all of the 3 but one) is taken; refused after its
    # wait. So is an anonymous read, which counts with that token's (ADR 0207); another
    # token is let in.
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=1)))
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"))))
    held.append(Held(reads, token=2))
    # Three threads wait on bodies: any other sender is refused, a request without a body
    # goes through untouched.
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=3)))
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"))))
    untouched = io.BytesIO(b"")
    assert wsgi_answer(reads, environ(untouched, length=""))[0] == 201
    assert wsgi_answer(reads, environ(untouched, length="0"))[0] == 201
    # Each held request is answered by its application once its body arrives.
    assert [each.finish()[0] for each in held] == [201, 201, 201]
    assert reads.readers == []
    assert wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=1))[0] == 201


def test_a_tokens_holder_adding_anonymous_reads_leaves_a_place_to_another_token(
    reads: BodyReads, held: list[Held]
) -> None:
    """A token's holder can also send bodies without its token (the admin's login form, a
    made-up CSRF cookie): counted as a sender apart, token 1's share and the anonymous one
    took all 3 places and every other producer was refused (ADR 0207)."""
    held.extend([Held(reads, token=1), Held(reads, token=None)])
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=1)))
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"))))
    held.append(Held(reads, token=2))
    assert [each.finish()[0] for each in held] == [201, 201, 201]
    assert reads.readers == []


def test_anonymous_reads_alone_leave_a_place_to_a_token_and_one_to_another(
    reads: BodyReads, held: list[Held]
) -> None:
    held.append(Held(reads, token=None))
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"))))
    held.append(Held(reads, token=1))
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=1)))
    held.append(Held(reads, token=2))
    assert [each.finish()[0] for each in held] == [201, 201, 201]


def test_a_read_waits_for_a_place_that_comes_free_and_is_not_refused(
    reads: BodyReads, held: list[Held]
) -> None:
    """A burst of one producer's clients: the places are taken for the moment their bodies
    are read, and the next read waits for one instead of a 503."""
    held.extend([Held(reads, token=1), Held(reads, token=1)])
    answers: list[tuple[int, dict[str, str], bytes]] = []
    late = threading.Thread(
        target=lambda: answers.append(wsgi_answer(reads, environ(io.BytesIO(b"{}"), token=1)))
    )
    late.start()
    freed = threading.Timer(0.2, held[0].stream.arrived.set)  # well within the wait
    freed.start()
    late.join(10)
    freed.join()
    assert [answer[0] for answer in answers] == [201]
    assert held[0].finish()[0] == 201 and held[1].finish()[0] == 201
    assert reads.readers == []


def test_a_request_whose_first_read_was_let_in_is_never_refused_later() -> None:
    reads = BodyReads(reading_app, limit=1)
    second_read: list[bytes] = []

    def two_reads(env: dict[str, Any], start_response: Any) -> list[bytes]:
        first = env["wsgi.input"].read(1)
        # As if other threads had filled the reads meanwhile.
        reads.readers.extend([None] * reads.limit)
        second_read.append(env["wsgi.input"].read())
        start_response("201 Created", [])
        return [first]

    reads.application = two_reads
    assert wsgi_answer(reads, environ(io.BytesIO(b"{}")))[0] == 201
    assert second_read == [b"}"]


def test_a_chunked_body_is_counted_as_a_body() -> None:
    reads = BodyReads(reading_app, limit=1)
    reads.readers.append(None)
    chunked = {**environ(io.BytesIO(b"{}"), length=""), "HTTP_TRANSFER_ENCODING": "chunked"}
    assert refused(wsgi_answer(reads, chunked))


def test_a_refusal_the_application_lets_through_is_answered_all_the_same() -> None:
    def careless(env: dict[str, Any], start_response: Any) -> list[bytes]:
        env["wsgi.input"].read()
        start_response("201 Created", [])
        return [b"never"]

    reads = BodyReads(careless, limit=1)
    reads.readers.append(None)
    assert refused(wsgi_answer(reads, environ(io.BytesIO(b"{}"))))

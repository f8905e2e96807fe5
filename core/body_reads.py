"""At most ``limit`` threads of a web process wait on request bodies at once (ADR 0197).

Why: granian (2.8.9) hands a request to a Python thread once its head has arrived, and its
``wsgi.input`` blocks that thread (in Rust, without the GIL) until the bytes asked for have
arrived or the peer closes; it has no body read timeout, and a read cannot be interrupted
from Python. A peer that sends a whole head and then its body a byte at a time held a
thread for as long as it liked: 16 of them (2 workers x 8 threads) and the kubelet's probe,
the API's reads and every other producer waited behind them.

So a read is refused, before it waits, when ``limit`` other threads of the process are
already inside one (the chart's ``WEB_THREADS`` less one: one thread a process is always
left to requests that read no body, the probes among them), or when all of them but one
are inside reads of the same sender: the same token (``TOKEN``, set by the bearer-token
authentication before any body is read), or no token at all (the admin's forms, anonymous
by nature: its login and the NUL guard read a form before anyone is authenticated). So one
slow token, or any number of anonymous peers, leaves a thread to the other producers'
bodies. Not half of them: a deployment's producers often share one token, and reads of
bodies already sent overlap (a read leaves the count only once it has the GIL again); one
token's 4 clients a worker, each a quarter of its time inside a read, would find the 3
others there on 1 request in 64 (0.25 ** 3; a model, not measured). The refused request is
answered 503 with ``Retry-After`` and ``Connection: close``, its body unread, whatever the
application made of the refusal (``BodyReads.__call__``): a problem document, in one
place, for the ingest endpoints, the Marquez mount and the admin's forms alike.

What a request that reads no body pays: two dictionary look-ups. One that reads one: an
object, and four list operations in C a read
(``tests/deploy/test_web_server_body_reads.py`` checks it against the shipped server).
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson
from django.core.exceptions import BadRequest

from core.problems import PROBLEM_CONTENT_TYPE, TYPE_PREFIX

# The environ key under which a request's verified token id is kept (ingest.authentication):
# the sender whose reads are counted together. A header not yet verified could be made up
# anew for every connection.
TOKEN = "lineage.token_id"
RETRY_AFTER_SECONDS = "5"
REFUSED_STATUS = "503 Service Unavailable"
REFUSED_BODY = orjson.dumps(
    {
        "type": TYPE_PREFIX + "body-readers-busy",
        "title": "Too many request bodies are being received",
        "status": 503,
        "detail": "Every thread of this server that may wait on a request body is waiting on "
        "one; nothing of this request was read or stored. Retry the same request later.",
    }
)
REFUSED_HEADERS = [
    ("Content-Type", PROBLEM_CONTENT_TYPE),
    ("Content-Length", str(len(REFUSED_BODY))),
    ("Retry-After", RETRY_AFTER_SECONDS),
    # The body was not read: the connection cannot carry another request.
    ("Connection", "close"),
    ("X-Content-Type-Options", "nosniff"),
]


class BodyReadRefused(BadRequest):
    """Raised by a refused read. A ``BadRequest``, so that whatever the application does
    with it is quick (DRF's handler and Django's answer it 400, logged as a warning, not
    as the 500 of an unknown exception); ``BodyReads`` then answers the request itself."""


class BodyReads:
    """WSGI middleware: counts the threads inside a request body's read (``CountedInput``)
    and answers a request whose read was refused with the 503 above."""

    def __init__(self, application: Callable[..., Iterable[bytes]], limit: int) -> None:
        self.application = application
        self.limit = max(1, limit)
        self.share = max(1, self.limit - 1)  # of them, at most this many for one sender
        # The sender of each read under way in this process, one entry a read. No lock:
        # append, len, count and remove are each one step under the GIL, and a read counts
        # itself before it looks (two at once may both be refused, never both let in).
        self.readers: list[Any] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("CONTENT_LENGTH", "0") in ("0", "") and (
            "HTTP_TRANSFER_ENCODING" not in environ
        ):
            return self.application(environ, start_response)  # no body to wait on
        body = environ["wsgi.input"] = CountedInput(environ, self)
        try:
            answer = self.application(environ, start_response)
        except BodyReadRefused:
            if not body.refused:
                raise
            answer = None  # an application that let the refusal through: answered here
        if not body.refused:
            return answer
        close = getattr(answer, "close", None)
        if callable(close):
            close()  # Django's response: request_finished, the request freed
        refusal = BodyReadRefused()
        start_response(REFUSED_STATUS, list(REFUSED_HEADERS), (BodyReadRefused, refusal, None))
        return [REFUSED_BODY]


class CountedInput:
    """``environ``'s ``wsgi.input``, its reads counted in ``reads.readers`` under the
    request's sender (its verified token, else None). A request's first read is refused,
    raising ``BodyReadRefused`` before it waits, when ``reads.limit`` reads are under way or
    ``reads.share`` of the same sender; a later read never is (a body refused halfway would
    reach the view cut short)."""

    __slots__ = ("environ", "reads", "refused", "started", "stream")

    def __init__(self, environ: dict[str, Any], reads: BodyReads) -> None:
        self.stream = environ["wsgi.input"]
        self.environ = environ
        self.reads = reads
        self.started = False
        self.refused = False

    def read(self, size: int | None = None) -> bytes:
        # What ``_counted`` does, written out: this is every body's read (a call less).
        reads = self.reads
        readers = reads.readers
        sender = self.environ.get(TOKEN)
        readers.append(sender)
        if not self.started:
            if len(readers) > reads.limit or readers.count(sender) > reads.share:
                readers.remove(sender)
                self.refused = True
                raise BodyReadRefused("Too many request bodies are being received.")
            self.started = True
        try:
            return self.stream.read(size)  # type: ignore[no-any-return]
        finally:
            readers.remove(sender)

    def readline(self, *size: Any) -> bytes:
        return self._counted(self.stream.readline, size)

    def readlines(self, *hint: Any) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def _counted(self, reading: Callable[..., bytes], size: tuple[Any, ...]) -> bytes:
        reads = self.reads
        readers = reads.readers
        sender = self.environ.get(TOKEN)
        readers.append(sender)
        if not self.started:
            if len(readers) > reads.limit or readers.count(sender) > reads.share:
                readers.remove(sender)
                self.refused = True
                raise BodyReadRefused("Too many request bodies are being received.")
            self.started = True
        try:
            return reading(*size)
        finally:
            readers.remove(sender)

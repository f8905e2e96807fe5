"""At most ``limit`` threads of a web process wait on request bodies at once (ADR 0197).

Why: granian (2.8.9) hands a request to a Python thread once its head has arrived, and its
``wsgi.input`` blocks that thread (in Rust, without the GIL) until the bytes asked for have
arrived or the peer closes; it has no body read timeout, and a read cannot be interrupted
from Python. A peer that sends a whole head and then its body a byte at a time held a
thread for as long as it liked: 16 of them (2 workers x 8 threads) and the kubelet's probe,
the API's reads and every other producer waited behind them.

So a request's first read waits for a place, at most ``PLACE_WAIT_SECONDS``, when ``limit``
other threads of the process are already inside one (the chart's ``WEB_THREADS`` less one:
one thread a process is always left to requests that read no body, the probes among them),
or when all of them but one are inside reads of the same sender: the same token (``TOKEN``,
set by the bearer-token authentication before any body is read), or no token at all (the
admin's forms, anonymous by nature: its login and the NUL guard read a form before anyone
is authenticated). So one slow token, or any number of anonymous peers, leaves a thread to
the other producers' bodies. Not half of them: a deployment's producers often share one
token. Anyone can read anonymously, a token's holder too: the anonymous reads count with
each token's in that token's share, and alone hold one place fewer (at least one), so one
token's holder who adds anonymous peers to its own still leaves a place to the other
producers (it took them all, ADR 0207). And a read waits for a place before it is refused:
a burst of one producer's clients, whose bodies have arrived, finds the places taken for
the few milliseconds each read takes (a read leaves the count only once it has the GIL
again); refused at once, 8 clients of one token posting at once to 2 workers of 4 threads
had 503s (tests/ingest/test_concurrent_ingest.py). A trickled body holds its place far
longer than the wait, so the wait refuses it all the same; the price is that a refused
request holds its thread for the wait, so a probe may wait behind it. A request refused
after its wait is answered 503 with ``Retry-After`` and ``Connection: close``, its body
unread, whatever the application made of the refusal (``BodyReads.__call__``): a problem
document, in one place, for the ingest endpoints, the Marquez mount and the admin's forms
alike.

What a request that reads no body pays: two dictionary look-ups. One that reads one: an
object, a lock taken twice a read, and a wait only when the places are taken
(``tests/deploy/test_web_server_body_reads.py`` checks it against the shipped server).
"""

import threading
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
# How long a request's first read waits for a place before it is refused: far longer than
# a read of a body that has arrived holds one, far shorter than a probe's timeout (3 s).
PLACE_WAIT_SECONDS = 0.5
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
        # The anonymous reads alone: one fewer, so that with them at their most, a token
        # may take one place (anonymous and one token together hold ``share``) and another
        # token the last one.
        self.anonymous_share = max(1, self.share - 1)
        # The sender of each read under way in this process, one entry a read, changed
        # under ``places``' lock, which a read leaving notifies.
        self.readers: list[Any] = []
        # The counts' lock, taken directly (C's enter and exit, not the condition's Python
        # ones: every read takes it twice), and the condition over it that waiting reads use.
        self.lock = threading.Lock()
        self.places = threading.Condition(self.lock)
        self.waiting = 0  # reads waiting for a place: a leaving read notifies only then

    def has_place(self, sender: Any) -> bool:
        """Whether a read of ``sender`` (a token id, or None: anonymous) may start: a place
        is free, and the sender's reads with the anonymous ones (which a token's holder can
        add to its own) stay within ``share``; the anonymous ones alone within
        ``anonymous_share``, and with the busiest token's within ``share``."""
        readers = self.readers
        if len(readers) >= self.limit:
            return False
        anonymous = readers.count(None)
        if sender is not None:
            return readers.count(sender) + anonymous < self.share
        if anonymous >= self.anonymous_share:
            return False
        busiest = max(
            (readers.count(other) for other in set(readers) if other is not None), default=0
        )
        return anonymous + busiest < self.share

    def enter(self, sender: Any, first: bool) -> bool:
        """Count a read of ``sender``; a request's ``first`` read waits for a place, at most
        ``PLACE_WAIT_SECONDS``, and is refused (False) when none came free."""
        readers = self.readers
        with self.lock:
            if first and not self.has_place(sender):
                self.waiting += 1
                try:
                    if not self.places.wait_for(lambda: self.has_place(sender), PLACE_WAIT_SECONDS):
                        return False
                finally:
                    self.waiting -= 1
            readers.append(sender)
            return True

    def leave(self, sender: Any) -> None:
        with self.lock:
            self.readers.remove(sender)
            if self.waiting:
                # All of them: the one whose place this was may be held back by its
                # sender's share while another's is free.
                self.places.notify_all()

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
    request's sender (its verified token, else None). A request's first read waits for a
    place while ``reads.limit`` reads are under way or ``reads.share`` of the same sender,
    and is refused, raising ``BodyReadRefused``, when none came free; a later read never
    waits nor is refused (a body refused halfway would reach the view cut short)."""

    __slots__ = ("environ", "reads", "refused", "started", "stream")

    def __init__(self, environ: dict[str, Any], reads: BodyReads) -> None:
        self.stream = environ["wsgi.input"]
        self.environ = environ
        self.reads = reads
        self.started = False
        self.refused = False

    def read(self, size: int | None = None) -> bytes:
        return self._counted(self.stream.read, () if size is None else (size,))

    def readline(self, *size: Any) -> bytes:
        return self._counted(self.stream.readline, size)

    def readlines(self, *hint: Any) -> list[bytes]:
        return list(iter(self.readline, b""))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def _counted(self, reading: Callable[..., bytes], size: tuple[Any, ...]) -> bytes:
        sender = self.environ.get(TOKEN)
        if not self.reads.enter(sender, first=not self.started):
            self.refused = True
            raise BodyReadRefused("Too many request bodies are being received.")
        self.started = True
        try:
            return reading(*size)
        finally:
            self.reads.leave(sender)

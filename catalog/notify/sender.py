"""One bounded HTTP POST to a checked address (ADR 0086).

The standard library's ``http.client``, because the connection must go to the address
``addresses.resolve`` checked and nowhere else: the socket is opened to that IP, the Host
header and the TLS server name (and certificate check) are the URL's host. It never follows
a redirect (a 3xx is an answer like any other, and not a success). The answer is read at
most ``MAX_ANSWER_BYTES`` and at most ``ANSWER_SECONDS`` long, status line and headers
included, each read waiting at most ``READ_TIMEOUT_SECONDS``; sending the request counts
toward it (its body written within ``READ_TIMEOUT_SECONDS`` in all, over HTTPS too). So a
receiver that sends its headers a byte at a time, or reads a large request a few bytes at a
time, cannot hold a try past its lease (after which the sweep would send the same delivery
again beside it). What the receiver sent is returned without NUL bytes, which PostgreSQL's
text columns refuse (the try could not be recorded, and would come back after every lease,
never dead).
"""

import functools
import http.client
import io
import socket
import ssl
import time
from dataclasses import dataclass

from django.conf import settings

from catalog.notify.addresses import RefusedAddress, Target, resolve


@dataclass
class Answer:
    status: int | None  # None: no HTTP answer (refused, unreachable, timed out)
    excerpt: str  # the start of the body, at most MAX_ANSWER_BYTES of it
    error: str  # why it is not a success ("" for a 2xx)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


TOO_LONG = "the answer took longer than LINEAGE_WEBHOOK_ANSWER_SECONDS"


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each read waiting at most ``READ_TIMEOUT_SECONDS`` and none
    starting after ``deadline``: what ``http.client`` parses the answer from. It reads
    through the socket's own raw file, which keeps the socket open while the body is read
    after ``http.client`` closed the connection (an answer with ``Connection: close``)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._raw = sock.makefile("rb", buffering=0)
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "memoryview | bytearray") -> int | None:  # type: ignore[override]
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(TOO_LONG)
        self._sock.settimeout(min(remaining, settings.WEBHOOKS["READ_TIMEOUT_SECONDS"]))
        try:
            return self._raw.readinto(buffer)
        except TimeoutError:
            if time.monotonic() >= self._deadline:
                raise TimeoutError(TOO_LONG) from None
            raise

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What ``HTTPResponse`` is given instead of the socket: it only calls ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


class _BoundedResponse(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: object, deadline: float, **kwargs: object):
        super().__init__(_DeadlineSocket(sock, deadline), *args, **kwargs)  # type: ignore[arg-type]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        self._tls = ssl.create_default_context()  # certificates checked against the host
        super().__init__(target.host, target.port, timeout=timeout, context=self._tls)
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str]) -> Answer:
    """POST ``body`` to ``url`` (checked again now: DNS may have changed since it was saved)."""
    options = settings.WEBHOOKS
    try:
        target = resolve(url)
    except RefusedAddress as error:
        return Answer(None, "", f"refused: {error}")
    connect_timeout = options["CONNECT_TIMEOUT_SECONDS"]
    read_timeout = options["READ_TIMEOUT_SECONDS"]
    https = target.url.scheme == "https"
    connection_class = _PinnedHTTPSConnection if https else _PinnedHTTPConnection
    connection = connection_class(target, connect_timeout)
    path = target.url.path or "/"
    if target.url.query:
        path += "?" + target.url.query
    try:
        try:
            connection.connect()
        except (OSError, ssl.SSLError) as error:
            return Answer(None, "", _storable(f"connect: {type(error).__name__}: {error}"))
        assert connection.sock is not None
        # Sending the request counts toward the answer's limit; each of http.client's two
        # writes (the head, then the body) takes at most the read timeout in all: sendall's
        # timeout is whole, over TLS too, where CPython writes it with one SSL_write (partial
        # writes off) bounded as a whole. A send giving each piece the timeout again would let
        # a receiver that keeps reading a large body slowly hold the try past its lease
        # (tests/notify/test_sending_bound.py).
        connection.sock.settimeout(min(read_timeout, options["ANSWER_SECONDS"]))
        deadline = time.monotonic() + options["ANSWER_SECONDS"]
        connection.response_class = functools.partial(_BoundedResponse, deadline=deadline)  # type: ignore[assignment]
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            try:
                excerpt = _read_bounded(response, options["MAX_ANSWER_BYTES"])
            finally:
                response.close()
        except (OSError, http.client.HTTPException) as error:
            return Answer(None, "", _storable(f"answer: {type(error).__name__}: {error}"))
        status = response.status
        if 200 <= status < 300:
            return Answer(status, excerpt, "")
        if 300 <= status < 400:
            where = response.getheader("Location", "")[:500]
            return Answer(status, excerpt, f"redirect to {where!r} not followed")
        return Answer(status, excerpt, f"HTTP {status}")
    finally:
        connection.close()


def _read_bounded(response: http.client.HTTPResponse, limit: int) -> str:
    """At most ``limit`` bytes of the body (each read bounded by the response's deadline);
    the rest is left unread (the connection is closed after)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = response.read1(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return _storable(b"".join(chunks).decode("utf-8", errors="replace"))


def _storable(text: str) -> str:
    """``text`` as a PostgreSQL text column can hold it: a NUL becomes U+FFFD."""
    return text.replace("\x00", "\ufffd")
